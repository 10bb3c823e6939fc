"""Foxglove well-known protobuf schemas (foxglove-schemas-protobuf), profile "": every channel `protobuf` except
joint states, written as ROS 2 `sensor_msgs/msg/JointState` (CDR), which Foxglove decodes in any MCAP and Rerun
plots as named Scalars (it shows `foxglove.JointStates` only as an opaque message)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from foxglove_schemas_protobuf.CameraCalibration_pb2 import CameraCalibration
from foxglove_schemas_protobuf.CompressedImage_pb2 import CompressedImage
from foxglove_schemas_protobuf.CompressedVideo_pb2 import CompressedVideo
from foxglove_schemas_protobuf.Event_pb2 import Event
from foxglove_schemas_protobuf.FrameTransforms_pb2 import FrameTransforms
from foxglove_schemas_protobuf.LaserScan_pb2 import LaserScan
from foxglove_schemas_protobuf.Log_pb2 import Log
from foxglove_schemas_protobuf.PackedElementField_pb2 import PackedElementField
from foxglove_schemas_protobuf.PointCloud_pb2 import PointCloud
from foxglove_schemas_protobuf.PosesInFrame_pb2 import PosesInFrame
from foxglove_schemas_protobuf.RawImage_pb2 import RawImage
from mcap_protobuf.schema import build_file_descriptor_set

from robokit.converters.mcap.encoding import Floats, Kind, Level, packed_points, projection
from robokit.converters.mcap.ros2 import Ros2Encoder
from robokit.timeline import CameraInfo
from robokit.timeline.points import Scan

CLASSES: dict[Kind, Any] = {
    "compressed_image": CompressedImage,
    "compressed_video": CompressedVideo,
    "raw_image": RawImage,
    "calibration": CameraCalibration,
    "transforms": FrameTransforms,
    "poses": PosesInFrame,
    "log": Log,
    "text": Log,
    "event": Event,
    "point_cloud": PointCloud,
    "laser_scan": LaserScan,
}
_LEVELS = {"info": Log.Level.INFO, "warning": Log.Level.WARNING}


def _stamp(field: Any, ns: int) -> None:
    field.seconds, field.nanos = divmod(int(ns), 1_000_000_000)


class ProtobufEncoder:
    """`foxglove.*` messages, timestamps as google.protobuf.Timestamp."""

    profile = ""

    def __init__(self) -> None:
        self._ros2 = Ros2Encoder()

    def schema(self, kind: Kind) -> tuple[str, str, bytes]:
        if kind not in CLASSES:
            return self._ros2.schema(kind)
        cls = CLASSES[kind]
        return cls.DESCRIPTOR.full_name, "protobuf", build_file_descriptor_set(cls).SerializeToString()

    def channel_metadata(self, topic: str) -> dict[str, str]:
        return {}

    def joint_states(self, stamp: int, names: Sequence[str], position: Floats | None, velocity: Floats | None,
                     effort: Floats | None) -> bytes:
        return self._ros2.joint_states(stamp, names, position, velocity, effort)

    def compressed_image(self, stamp: int, frame_id: str, fmt: str, data: bytes) -> bytes:
        msg = CompressedImage(frame_id=frame_id, format=fmt, data=data)
        _stamp(msg.timestamp, stamp)
        return bytes(msg.SerializeToString())

    def compressed_video(self, stamp: int, frame_id: str, fmt: str, data: bytes) -> bytes:
        msg = CompressedVideo(frame_id=frame_id, format=fmt, data=data)
        _stamp(msg.timestamp, stamp)
        return bytes(msg.SerializeToString())

    def raw_image(self, stamp: int, frame_id: str, pixels: np.ndarray, encoding: str) -> bytes:
        px = np.ascontiguousarray(pixels, dtype=pixels.dtype.newbyteorder("<"))
        height, width = px.shape[:2]
        msg = RawImage(frame_id=frame_id, width=width, height=height, encoding=encoding,
                       step=px.strides[0], data=px.tobytes())
        _stamp(msg.timestamp, stamp)
        return bytes(msg.SerializeToString())

    def calibration(self, stamp: int, frame_id: str, info: CameraInfo) -> bytes:
        d, k, r, p, model = projection(info)
        msg = CameraCalibration(frame_id=frame_id, width=info.width, height=info.height, distortion_model=model,
                                D=d, K=k, R=r, P=p)
        _stamp(msg.timestamp, stamp)
        return bytes(msg.SerializeToString())

    def transforms(self, stamp: int, parents: Sequence[str], children: Sequence[str], translation: Floats,
                   quaternion: Floats) -> bytes:
        msg = FrameTransforms()
        for parent, child, t, q in zip(parents, children, translation.tolist(), quaternion.tolist(), strict=True):
            tf = msg.transforms.add(parent_frame_id=parent, child_frame_id=child)
            _stamp(tf.timestamp, stamp)
            tf.translation.x, tf.translation.y, tf.translation.z = t
            tf.rotation.x, tf.rotation.y, tf.rotation.z, tf.rotation.w = q
        return bytes(msg.SerializeToString())

    def poses(self, stamp: int, frame_id: str, translation: Floats, quaternion: Floats) -> bytes:
        msg = PosesInFrame(frame_id=frame_id)
        _stamp(msg.timestamp, stamp)
        for t, q in zip(translation.tolist(), quaternion.tolist(), strict=True):
            pose = msg.poses.add()
            pose.position.x, pose.position.y, pose.position.z = t
            pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = q
        return bytes(msg.SerializeToString())

    def point_cloud(self, stamp: int, frame_id: str, points: np.ndarray, fields: Sequence[str]) -> bytes:
        data, stride = packed_points(points)
        msg = PointCloud(frame_id=frame_id, point_stride=stride, data=data)
        _stamp(msg.timestamp, stamp)
        msg.pose.orientation.w = 1.0
        for i, name in enumerate(fields):
            msg.fields.add(name=name, offset=4 * i, type=PackedElementField.FLOAT32)
        return bytes(msg.SerializeToString())

    def laser_scan(self, stamp: int, frame_id: str, scan: Scan) -> bytes:
        """Foxglove has no range limits: ranges that are no reading (outside range_min..range_max) become NaN."""
        ranges = np.where(scan.valid(), scan.ranges, np.nan)
        msg = LaserScan(frame_id=frame_id, start_angle=scan.angle_min, end_angle=scan.angle_max,
                        ranges=ranges.tolist(), intensities=scan.intensities.tolist())
        _stamp(msg.timestamp, stamp)
        msg.pose.orientation.w = 1.0
        return bytes(msg.SerializeToString())

    def log(self, stamp: int, level: Level, name: str, text: str) -> bytes:
        msg = Log(level=_LEVELS[level], name=name, message=text)
        _stamp(msg.timestamp, stamp)
        return bytes(msg.SerializeToString())

    def text(self, stamp: int, name: str, text: str) -> bytes:
        return self.log(stamp, "info", name, text)

    def event(self, start: int, end: int, name: str, fields: Mapping[str, str]) -> bytes:
        msg = Event()
        _stamp(msg.start_time, start)
        _stamp(msg.end_time, end)
        for key, value in {"event": name, **fields}.items():
            msg.metadata.add(key=key, value=value)
        return bytes(msg.SerializeToString())
