"""ROS 2 messages in CDR via rosbags' typestore: profile `ros2`, `ros2msg` schemas, readable by rosbags and ros2 bag."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import yaml
from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2.metadata import dump_qos_v9
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from robokit.converters.mcap.encoding import Floats, Kind, Level, packed_points, projection
from robokit.ros.video import COMPRESSED_VIDEO, COMPRESSED_VIDEO_MSG
from robokit.timeline import CameraInfo
from robokit.timeline.points import Scan

TYPES: dict[Kind, str] = {
    "joint_states": "sensor_msgs/msg/JointState",
    "compressed_image": "sensor_msgs/msg/CompressedImage",
    "compressed_video": COMPRESSED_VIDEO,
    "raw_image": "sensor_msgs/msg/Image",
    "calibration": "sensor_msgs/msg/CameraInfo",
    "transforms": "tf2_msgs/msg/TFMessage",
    "poses": "nav_msgs/msg/Path",
    "log": "rcl_interfaces/msg/Log",
    "text": "std_msgs/msg/String",
    "event": "rcl_interfaces/msg/Log",
    "point_cloud": "sensor_msgs/msg/PointCloud2",
    "laser_scan": "sensor_msgs/msg/LaserScan",
}
_LEVELS = {"info": 20, "warning": 30}
_FLOAT32 = 7  # sensor_msgs/PointField datatype
_EMPTY = np.zeros(0, dtype=np.float64)
_NEVER = QosTime(2147483647, 4294967295)  # rclcpp's "infinite" duration as rosbag2 records it


@lru_cache(maxsize=1)
def _store() -> Any:
    """The standard ROS 2 types and foxglove_msgs CompressedVideo (coded video passed through)."""
    store = get_typestore(Stores.LATEST)
    store.register(get_types_from_msg(COMPRESSED_VIDEO_MSG, COMPRESSED_VIDEO))
    return store


class Ros2Encoder:
    """sensor_msgs / tf2_msgs / nav_msgs / rcl_interfaces / std_msgs messages; events as rcl_interfaces Log."""

    profile = "ros2"

    def __init__(self) -> None:
        self.store = _store()
        t = self.store.types
        self._time, self._header = t["builtin_interfaces/msg/Time"], t["std_msgs/msg/Header"]
        self._vector, self._point = t["geometry_msgs/msg/Vector3"], t["geometry_msgs/msg/Point"]
        self._quat, self._pose = t["geometry_msgs/msg/Quaternion"], t["geometry_msgs/msg/Pose"]
        self._tf, self._tf_stamped = t["geometry_msgs/msg/Transform"], t["geometry_msgs/msg/TransformStamped"]
        self._pose_stamped = t["geometry_msgs/msg/PoseStamped"]

    def schema(self, kind: Kind) -> tuple[str, str, bytes]:
        msgdef, _ = self.store.generate_msgdef(TYPES[kind], ros_version=2)
        return TYPES[kind], "ros2msg", msgdef.encode()

    def channel_metadata(self, topic: str) -> dict[str, str]:
        """rosbag2's `offered_qos_profiles`: latched (transient local) for /tf_static, so `ros2 bag play` keeps it."""
        latched = topic == "/tf_static"
        qos = Qos(QosHistory.KEEP_LAST, 1 if latched else 10, QosReliability.RELIABLE,
                  QosDurability.TRANSIENT_LOCAL if latched else QosDurability.VOLATILE, _NEVER, _NEVER,
                  QosLiveliness.AUTOMATIC, _NEVER, False)
        return {"offered_qos_profiles": yaml.safe_dump(dump_qos_v9([qos]), sort_keys=False).strip()}

    def _serialize(self, kind: Kind, msg: Any) -> bytes:
        return bytes(self.store.serialize_cdr(msg, TYPES[kind]))

    def _stamp(self, ns: int) -> Any:
        sec, nanosec = divmod(int(ns), 1_000_000_000)
        return self._time(sec=sec, nanosec=nanosec)

    def _hdr(self, ns: int, frame_id: str = "") -> Any:
        return self._header(stamp=self._stamp(ns), frame_id=frame_id)

    def joint_states(self, stamp: int, names: Sequence[str], position: Floats | None, velocity: Floats | None,
                     effort: Floats | None) -> bytes:
        msg = self.store.types[TYPES["joint_states"]](
            header=self._hdr(stamp), name=list(names), position=_array(position), velocity=_array(velocity),
            effort=_array(effort))
        return self._serialize("joint_states", msg)

    def compressed_image(self, stamp: int, frame_id: str, fmt: str, data: bytes) -> bytes:
        msg = self.store.types[TYPES["compressed_image"]](
            header=self._hdr(stamp, frame_id), format=fmt, data=np.frombuffer(data, dtype=np.uint8))
        return self._serialize("compressed_image", msg)

    def compressed_video(self, stamp: int, frame_id: str, fmt: str, data: bytes) -> bytes:
        msg = self.store.types[COMPRESSED_VIDEO](
            timestamp=self._stamp(stamp), frame_id=frame_id, format=fmt, data=np.frombuffer(data, dtype=np.uint8))
        return self._serialize("compressed_video", msg)

    def raw_image(self, stamp: int, frame_id: str, pixels: np.ndarray, encoding: str) -> bytes:
        px = np.ascontiguousarray(pixels, dtype=pixels.dtype.newbyteorder("<"))
        height, width = px.shape[:2]
        msg = self.store.types[TYPES["raw_image"]](
            header=self._hdr(stamp, frame_id), height=height, width=width, encoding=encoding, is_bigendian=0,
            step=px.strides[0], data=px.reshape(-1).view(np.uint8))
        return self._serialize("raw_image", msg)

    def calibration(self, stamp: int, frame_id: str, info: CameraInfo) -> bytes:
        d, k, r, p, model = projection(info)
        roi = self.store.types["sensor_msgs/msg/RegionOfInterest"](x_offset=0, y_offset=0, height=0, width=0,
                                                                   do_rectify=False)
        msg = self.store.types[TYPES["calibration"]](
            header=self._hdr(stamp, frame_id), height=info.height, width=info.width, distortion_model=model,
            d=np.asarray(d), k=np.asarray(k), r=np.asarray(r), p=np.asarray(p), binning_x=0, binning_y=0, roi=roi)
        return self._serialize("calibration", msg)

    def transforms(self, stamp: int, parents: Sequence[str], children: Sequence[str], translation: Floats,
                   quaternion: Floats) -> bytes:
        transforms = [
            self._tf_stamped(header=self._hdr(stamp, parent), child_frame_id=child, transform=self._tf(
                translation=self._vector(x=t[0], y=t[1], z=t[2]), rotation=self._quat(x=q[0], y=q[1], z=q[2], w=q[3])))
            for parent, child, t, q in zip(parents, children, translation.tolist(), quaternion.tolist(), strict=True)
        ]
        return self._serialize("transforms", self.store.types[TYPES["transforms"]](transforms=transforms))

    def poses(self, stamp: int, frame_id: str, translation: Floats, quaternion: Floats) -> bytes:
        header = self._hdr(stamp, frame_id)
        poses = [
            self._pose_stamped(header=header, pose=self._pose(
                position=self._point(x=t[0], y=t[1], z=t[2]), orientation=self._quat(x=q[0], y=q[1], z=q[2], w=q[3])))
            for t, q in zip(translation.tolist(), quaternion.tolist(), strict=True)
        ]
        return self._serialize("poses", self.store.types[TYPES["poses"]](header=header, poses=poses))

    def point_cloud(self, stamp: int, frame_id: str, points: np.ndarray, fields: Sequence[str]) -> bytes:
        data, stride = packed_points(points)
        field = self.store.types["sensor_msgs/msg/PointField"]
        msg = self.store.types[TYPES["point_cloud"]](
            header=self._hdr(stamp, frame_id), height=1, width=len(points),
            fields=[field(name=name, offset=4 * i, datatype=_FLOAT32, count=1) for i, name in enumerate(fields)],
            is_bigendian=False, point_step=stride, row_step=stride * len(points),
            data=np.frombuffer(data, dtype=np.uint8), is_dense=bool(np.isfinite(points).all()))
        return self._serialize("point_cloud", msg)

    def laser_scan(self, stamp: int, frame_id: str, scan: Scan) -> bytes:
        msg = self.store.types[TYPES["laser_scan"]](
            header=self._hdr(stamp, frame_id), angle_min=scan.angle_min, angle_max=scan.angle_max,
            angle_increment=scan.angle_increment, time_increment=scan.time_increment, scan_time=scan.scan_time,
            range_min=scan.range_min,
            range_max=scan.range_max, ranges=np.asarray(scan.ranges, dtype=np.float32),
            intensities=np.asarray(scan.intensities, dtype=np.float32))
        return self._serialize("laser_scan", msg)

    def log(self, stamp: int, level: Level, name: str, text: str) -> bytes:
        msg = self.store.types[TYPES["log"]](stamp=self._stamp(stamp), level=_LEVELS[level], name=name, msg=text,
                                             file="", function="", line=0)
        return self._serialize("log", msg)

    def text(self, stamp: int, name: str, text: str) -> bytes:
        return self._serialize("text", self.store.types[TYPES["text"]](data=text))

    def event(self, start: int, end: int, name: str, fields: Mapping[str, str]) -> bytes:
        body = json.dumps({"start_ns": int(start), "end_ns": int(end), **fields})
        return self.log(start, "info", name, body)


def _array(values: Floats | None) -> np.ndarray:
    return _EMPTY if values is None else np.asarray(values, dtype=np.float64)
