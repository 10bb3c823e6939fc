"""Generators of small recordings for the reader tests: ROS 1/2 bags via rosbags, Foxglove MCAP via mcap.

`scenario(msgs)` is one recording holding every mapped ROS type (with padded, big-endian and bgr images,
JPEG, camera_info, duplicates, header vs log clocks, a type without a builder); `check_scenario` asserts what any
container must read back from it, so every container is tested against the same expectations.
"""

from __future__ import annotations

import io
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mcap.writer import CompressionType, Writer
from mcap_protobuf.schema import register_schema
from PIL import Image
from rosbags.rosbag1 import Writer as Writer1
from rosbags.rosbag2 import StoragePlugin
from rosbags.rosbag2 import Writer as Writer2
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.base import Nodetype

import robokit
from robokit.timeline import Episode, EventStream, ImageStream, NumericStream, PoseStream

T0 = 1_700_000_000_000_000_000  # 2023-11-14 UTC
LAG = 2_000_000  # the recorder's log time lags the header stamp by 2 ms
MS = 1_000_000
Record = tuple[str, str, int, Any]  # topic, type, log time (ns), message

_DTYPES = {"bool": np.bool_, "byte": np.uint8, "char": np.uint8, "float32": np.float32, "float64": np.float64}
_DTYPES |= {f"{s}int{b}": np.dtype(f"{s[:1] or 'i'}{b // 8}").type for s in ("", "u") for b in (8, 16, 32, 64)}


class RosMsgs:
    """Builds messages for one rosbags typestore (ROS 2 LATEST or ROS 1 noetic) with the same calls."""

    def __init__(self, store: Any) -> None:
        self.ts = store
        self.ros1 = "seq" in dict(store.fielddefs["std_msgs/msg/Header"][1])

    def make(self, msgtype: str, **fields: Any) -> Any:
        """A message with every field not given set to zero / empty (rosbags classes have no defaults)."""
        args = {
            name: fields[name] if name in fields else self._zero(desc) for name, desc in self.ts.fielddefs[msgtype][1]
        }
        return self.ts.types[msgtype](**args)

    def _zero(self, desc: Any) -> Any:
        kind, detail = desc
        if kind == Nodetype.NAME:
            return self.make(detail)
        if kind == Nodetype.BASE:
            return "" if detail[0] == "string" else False if detail[0] == "bool" else 0
        sub, size = detail
        if sub[0] == Nodetype.BASE and sub[1][0] != "string":
            return np.zeros(size if kind == Nodetype.ARRAY else 0, dtype=_DTYPES[sub[1][0]])
        return [self._zero(sub) for _ in range(size if kind == Nodetype.ARRAY else 0)]

    def header(self, ns: int, frame: str = "") -> Any:
        stamp = self.make("builtin_interfaces/msg/Time", sec=ns // 10**9, nanosec=ns % 10**9)
        return self.make("std_msgs/msg/Header", stamp=stamp, frame_id=frame)

    def vec(self, x: float, y: float, z: float, kind: str = "Vector3") -> Any:
        return self.make(f"geometry_msgs/msg/{kind}", x=x, y=y, z=z)

    def quat(self, x: float, y: float, z: float, w: float) -> Any:
        return self.make("geometry_msgs/msg/Quaternion", x=x, y=y, z=z, w=w)

    def pose(self, p: Sequence[float], q: Sequence[float]) -> Any:
        return self.make("geometry_msgs/msg/Pose", position=self.vec(*p, kind="Point"), orientation=self.quat(*q))

    def twist(self, v: Sequence[float]) -> Any:
        return self.make("geometry_msgs/msg/Twist", linear=self.vec(*v[:3]), angular=self.vec(*v[3:]))

    def joint_state(
        self, ns: int, names: Sequence[str], position: Sequence[float], velocity: Sequence[float] = ()
    ) -> Any:
        return self.make(
            "sensor_msgs/msg/JointState",
            header=self.header(ns),
            name=list(names),
            position=np.asarray(position, dtype=np.float64),
            velocity=np.asarray(velocity, dtype=np.float64),
        )

    def image(
        self, ns: int, pixels: np.ndarray, encoding: str, frame: str = "", pad: int = 0, big: bool = False
    ) -> Any:
        """A raw Image of `pixels` (already in the encoding's channel order), rows padded by `pad` bytes."""
        h, w = pixels.shape[:2]
        data = pixels.astype(pixels.dtype.newbyteorder(">" if big else "<")).reshape(h, -1).view(np.uint8)
        rows = np.concatenate([data, np.full((h, pad), 0xEE, np.uint8)], axis=1)
        return self.make(
            "sensor_msgs/msg/Image",
            header=self.header(ns, frame),
            height=h,
            width=w,
            encoding=encoding,
            is_bigendian=int(big),
            step=rows.shape[1],
            data=rows.reshape(-1),
        )

    def compressed(self, ns: int, data: bytes, fmt: str = "jpeg", frame: str = "") -> Any:
        return self.make(
            "sensor_msgs/msg/CompressedImage",
            header=self.header(ns, frame),
            format=fmt,
            data=np.frombuffer(data, np.uint8),
        )

    def camera_info(self, ns: int, width: int, height: int, k: Sequence[float], d: Sequence[float], frame: str) -> Any:
        names = ("K", "D") if self.ros1 else ("k", "d")
        return self.make(
            "sensor_msgs/msg/CameraInfo",
            header=self.header(ns, frame),
            width=width,
            height=height,
            distortion_model="plumb_bob",
            **{names[0]: np.asarray(k, float), names[1]: np.asarray(d, float)},
        )

    def transform(self, ns: int, parent: str, child: str, t: Sequence[float], q: Sequence[float]) -> Any:
        tf = self.make("geometry_msgs/msg/Transform", translation=self.vec(*t), rotation=self.quat(*q))
        return self.make(
            "geometry_msgs/msg/TransformStamped", header=self.header(ns, parent), child_frame_id=child, transform=tf
        )

    def tf(self, transforms: list[Any], msgtype: str = "tf2_msgs/msg/TFMessage") -> Any:
        return self.make(msgtype, transforms=transforms)

    def string(self, text: str) -> Any:
        return self.make("std_msgs/msg/String", data=text)


def ros1_store() -> Any:
    """ROS 1 noetic types plus the TF messages it lacks (tf2_msgs and the old tf/tfMessage)."""
    store = get_typestore(Stores.ROS1_NOETIC)
    text = "geometry_msgs/TransformStamped[] transforms"
    store.register(get_types_from_msg(text, "tf2_msgs/msg/TFMessage") | get_types_from_msg(text, "tf/msg/tfMessage"))
    return store


def jpeg(pixels: np.ndarray, fmt: str = "JPEG") -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format=fmt)
    return buf.getvalue()


def front_pixels(i: int) -> np.ndarray:
    """4×3 rgb8 test pattern of frame i: R = 10·x + i, G = 10·y, B = 7."""
    y, x = np.mgrid[0:3, 0:4]
    return np.stack([10 * x + i, 10 * y, np.full_like(x, 7)], axis=-1).astype(np.uint8)


DEPTH = (np.arange(20, dtype=np.uint16).reshape(4, 5) * 251) % 5000
WRIST_JPEG = [jpeg(np.full((6, 8, 3), 40 * i, np.uint8)) for i in range(2)]
FRONT_K = [100.0, 0.0, 2.0, 0.0, 100.0, 1.5, 0.0, 0.0, 1.0]
SIM_T0 = 100 * 10**9  # a simulator clock: header stamps far from the log time


def scenario(m: RosMsgs, tf_type: str = "tf2_msgs/msg/TFMessage") -> list[Record]:
    """One recording with every mapped ROS type; log times lag header stamps by LAG."""
    out: list[Record] = []

    def add(topic: str, msgtype: str, ns: int, msg: Any, lag: int = LAG) -> None:
        out.append((topic, msgtype, ns + lag, msg))

    js = "sensor_msgs/msg/JointState"
    for i in range(4):
        pos = [i * 0.01 + j for j in range(3)]
        names, pos = (("c", "a", "b"), [pos[2], pos[0], pos[1]]) if i == 2 else (("a", "b", "c"), pos)
        add("/joint_states", js, T0 + i * 10 * MS, m.joint_state(T0 + i * 10 * MS, names, pos, [0.1 * i] * 3))
    add("/joint_states", js, T0 + 40 * MS, m.joint_state(T0 + 40 * MS, ("a", "c"), [0.04, 2.04], [0.4, 0.4]))
    add("/joint_states", js, T0 + 40 * MS, m.joint_state(T0 + 40 * MS, ("a", "b", "c"), [9, 9, 9]), lag=LAG + 1)
    repeat = [0.01 + j for j in range(3)]  # the message at 10 ms again: a duplicate, dropped
    add("/joint_states", js, T0 + 10 * MS, m.joint_state(T0 + 10 * MS, ("a", "b", "c"), repeat, [0.1] * 3), lag=LAG + 2)
    add("/left/joint_states", js, T0, m.joint_state(T0, ("l1",), [0.5]))
    for i in range(3):
        t = T0 + i * 33 * MS
        add("/camera/front/image_raw", "sensor_msgs/msg/Image", t, m.image(t, front_pixels(i), "rgb8", "front_optical"))
        add("/camera/side/image_raw", "sensor_msgs/msg/Image", t, m.image(t, front_pixels(i)[..., ::-1], "bgr8"))
    add(
        "/camera/front/camera_info",
        "sensor_msgs/msg/CameraInfo",
        T0,
        m.camera_info(T0, 4, 3, FRONT_K, [0.1, 0, 0, 0, 0], "front_optical"),
    )
    for i, data in enumerate(WRIST_JPEG):
        t = T0 + i * 66 * MS
        add(
            "/camera/wrist/image_raw/compressed",
            "sensor_msgs/msg/CompressedImage",
            t,
            m.compressed(t, data, "jpeg", "wrist"),
        )
    add("/camera/depth/image_raw", "sensor_msgs/msg/Image", T0, m.image(T0, DEPTH, "16UC1", "depth_optical", pad=64))
    add("/camera/be/image_raw", "sensor_msgs/msg/Image", T0, m.image(T0, DEPTH, "16UC1", big=True))
    q0 = (0.0, 0.0, 0.0, 1.0)
    for i in range(3):
        t = T0 + i * 20 * MS
        tfs = [m.transform(t, "/world", "base", (i, 0, 0), q0), m.transform(t, "base", "/tool", (0, 0, 0.1 * i), q0)]
        add("/tf", tf_type, t, m.tf(tfs, tf_type))
    add("/tf_static", "tf2_msgs/msg/TFMessage", T0, m.tf([m.transform(T0, "base", "carrot", (1, 2, 3), q0)]))
    for i in range(2):
        t = T0 + i * 50 * MS
        ps = m.make("geometry_msgs/msg/PoseStamped", header=m.header(t, "world"), pose=m.pose((i, 1, 2), (0, 0, 1, 0)))
        add("/gripper/pose", "geometry_msgs/msg/PoseStamped", t, ps)
        add("/ee_transform", "geometry_msgs/msg/TransformStamped", t, m.transform(t, "base", "ee", (0, i, 0), q0))
        ts = m.make("geometry_msgs/msg/TwistStamped", header=m.header(t), twist=m.twist([1, 2, 3, 4, 5, 6 + i]))
        add("/base/twist", "geometry_msgs/msg/TwistStamped", t, ts)
        sim = m.make("geometry_msgs/msg/TwistStamped", header=m.header(SIM_T0 + t - T0), twist=m.twist([i] * 6))
        add("/sim/twist", "geometry_msgs/msg/TwistStamped", t, sim)
        w = m.make("geometry_msgs/msg/Wrench", force=m.vec(1, 2, 3), torque=m.vec(4, 5, 6 + i))
        ws = m.make("geometry_msgs/msg/WrenchStamped", header=m.header(t), wrench=w)
        add("/wrist/wrench", "geometry_msgs/msg/WrenchStamped", t, ws)
        odom = m.make(
            "nav_msgs/msg/Odometry",
            header=m.header(t, "odom"),
            child_frame_id="base_link",
            pose=m.make("geometry_msgs/msg/PoseWithCovariance", pose=m.pose((i, 0, 0), q0)),
            twist=m.make("geometry_msgs/msg/TwistWithCovariance", twist=m.twist([0.5, 0, 0, 0, 0, 0.1])),
        )
        add("/odom", "nav_msgs/msg/Odometry", t, odom)
        imu = m.make(
            "sensor_msgs/msg/Imu",
            header=m.header(t, "imu_link"),
            orientation=m.quat(0, 0, 0, 1),
            angular_velocity=m.vec(0.1, 0.2, 0.3),
            linear_acceleration=m.vec(0, 0, 9.81),
        )
        add("/imu/data", "sensor_msgs/msg/Imu", t, imu)
        add("/notes", "std_msgs/msg/String", t, m.string(f"note {i}"))
    for i in range(3):
        add("/cmd_vel", "geometry_msgs/msg/Twist", T0 + i * 10 * MS, m.twist([0.1 * i, 0, 0, 0, 0, 0.5]))
    add("/task", "std_msgs/msg/String", T0, m.string("pick the cube"))
    for i in range(4):
        add("/counter", "std_msgs/msg/Int32", T0 + i * MS, m.make("std_msgs/msg/Int32", data=i))
    plain_messages(m, add)
    add("/kv", "diagnostic_msgs/msg/KeyValue", T0, m.make("diagnostic_msgs/msg/KeyValue", key="a", value="b"))
    return out


def plain_messages(m: RosMsgs, add: Any) -> None:
    """Two messages each of the plain types robokit/ros/plain.py maps."""
    f64 = np.float64
    for i in range(2):
        t = T0 + i * 10 * MS
        add("/flag", "std_msgs/msg/Bool", t, m.make("std_msgs/msg/Bool", data=bool(i)))
        add("/floats", "std_msgs/msg/Float64MultiArray", t,
            m.make("std_msgs/msg/Float64MultiArray", data=np.array([i, 2.5, -1] if i == 0 else [7], dtype=f64)))
        joy = m.make("sensor_msgs/msg/Joy", header=m.header(t), axes=np.array([0.5 * i, -1], dtype=np.float32),
                     buttons=np.array([i, 0, 1], dtype=np.int32))
        add("/joy", "sensor_msgs/msg/Joy", t, joy)
        point = m.make("trajectory_msgs/msg/JointTrajectoryPoint", positions=np.array([i, 2.0 * i], dtype=f64))
        names = ["j1", "j2"] if i == 0 else ["j2", "j1"]
        add("/arm/command", "trajectory_msgs/msg/JointTrajectory", t,
            m.make("trajectory_msgs/msg/JointTrajectory", header=m.header(t), joint_names=names, points=[point]))
        add("/battery", "sensor_msgs/msg/BatteryState", t,
            m.make("sensor_msgs/msg/BatteryState", header=m.header(t), voltage=12.5 - i, percentage=0.9))
        add("/temperature", "sensor_msgs/msg/Temperature", t,
            m.make("sensor_msgs/msg/Temperature", header=m.header(t), temperature=20.0 + i))
        add("/imu/mag", "sensor_msgs/msg/MagneticField", t,
            m.make("sensor_msgs/msg/MagneticField", header=m.header(t), magnetic_field=m.vec(1e-5, 0, i)))
        add("/gps/fix", "sensor_msgs/msg/NavSatFix", t,
            m.make("sensor_msgs/msg/NavSatFix", header=m.header(t), latitude=48.0 + i, longitude=11.5, altitude=500))


def check_scenario(ep: Episode) -> None:
    """What every container must read back from `scenario`."""
    s = ep.streams
    assert not ep.skipped  # a type without a builder is flattened by its fields: strings become events
    kv = s["kv/key"]
    assert isinstance(kv, EventStream) and kv.values == ("a",) and s["kv/value"].values == ("b",)
    assert kv.origin is not None and kv.origin.msgtype == "diagnostic_msgs/msg/KeyValue"
    check_plain(ep)
    pos = s["joints/position"]
    assert isinstance(pos, NumericStream) and pos.names == ("a", "b", "c") and pos.unit == "rad"
    assert pos.origin is not None and pos.origin.time_source == "header"
    # two messages share the last stamp with different content: both kept, in recorded order, 1 ns apart
    assert pos.timestamps.tolist() == [T0 + i * 10 * MS for i in range(5)] + [T0 + 40 * MS + 1]
    expected = [[i * 0.01 + j for j in range(3)] for i in range(4)] + [[0.04, np.nan, 2.04], [9, 9, 9]]
    np.testing.assert_allclose(pos.values, expected)
    assert len(s["joints/velocity"]) == 6 and "joints/effort" not in s
    assert any("share a timestamp" in w and "/joint_states" in w for w in ep.warnings)
    assert any("1 sample(s) of joints/position dropped (same timestamp and content" in w for w in ep.warnings)
    assert s["left_joints/position"].values.tolist() == [[0.5]]

    front = s["front/rgb"]
    assert isinstance(front, ImageStream) and (front.width, front.height, front.encoding) == (4, 3, "rgb8")
    assert front.format == "raw" and front.frame_id == "front_optical"
    assert front.camera is not None and front.camera.k.tolist() == np.reshape(FRONT_K, (3, 3)).tolist()
    assert front.camera.distortion.tolist() == [0.1, 0, 0, 0, 0] and front.camera.frame_id == "front_optical"
    for i, frame in enumerate(front.frames()):
        assert np.array_equal(frame.array(), front_pixels(i))
    side = s["side/rgb"]
    assert isinstance(side, ImageStream) and side.encoding == "rgb8" and side.camera is None
    assert np.array_equal(side.frame(2).array(), front_pixels(2))
    wrist = s["wrist/rgb"]
    assert isinstance(wrist, ImageStream) and wrist.format == "jpeg" and (wrist.width, wrist.height) == (8, 6)
    assert [f.data for f in wrist.frames()] == WRIST_JPEG
    depth, be = s["camera/depth"], s["be/depth"]
    assert isinstance(depth, ImageStream) and isinstance(be, ImageStream) and depth.is_depth
    for stream in (depth, be):
        pixels = stream.frame(0).array()
        assert pixels.dtype == np.uint16 and np.array_equal(pixels, DEPTH)

    base, tool, carrot = s["tf/base"], s["tf/tool"], s["tf/carrot"]
    assert isinstance(base, PoseStream) and isinstance(tool, PoseStream) and isinstance(carrot, PoseStream)
    assert (base.parent_frame, base.child_frame, tool.parent_frame) == ("world", "base", "base")
    assert base.translation[:, 0].tolist() == [0, 1, 2] and not base.static and base.convention == "ros"
    assert carrot.static and carrot.translation.tolist() == [[1, 2, 3]]
    assert s["tf/ee"].translation[:, 1].tolist() == [0, 1]
    pose = s["gripper/pose"]
    assert isinstance(pose, PoseStream) and pose.parent_frame == "world" and pose.quaternion[0].tolist() == [0, 0, 1, 0]

    cmd = s["cmd_vel/twist"]
    assert isinstance(cmd, NumericStream) and cmd.names[0] == "linear.x" and cmd.unit == "m/s, rad/s"
    assert cmd.origin is not None and cmd.origin.time_source == "log"
    assert cmd.timestamps.tolist() == [T0 + i * 10 * MS + LAG for i in range(3)]
    assert s["base/twist"].values[1].tolist() == [1, 2, 3, 4, 5, 7]
    sim = s["sim/twist"]
    assert sim.origin is not None and sim.origin.time_source == "log" and sim.start_ns == T0 + LAG
    wrench = s["wrist/wrench"]
    assert isinstance(wrench, NumericStream) and wrench.names[3] == "torque.x" and wrench.values[1, 5] == 7
    odom_pose, odom_twist = s["odom/pose"], s["odom/twist"]
    assert (
        isinstance(odom_pose, PoseStream) and odom_pose.child_frame == "base_link" and odom_pose.parent_frame == "odom"
    )
    assert odom_twist.values[0].tolist() == [0.5, 0, 0, 0, 0, 0.1]
    orientation = s["imu/orientation"]
    assert isinstance(orientation, PoseStream) and orientation.translation.tolist() == [[0, 0, 0]] * 2
    assert s["imu/angular_velocity"].values[0].tolist() == pytest.approx([0.1, 0.2, 0.3])
    assert s["imu/linear_acceleration"].values[0].tolist() == pytest.approx([0, 0, 9.81])

    task, notes = s["task"], s["notes/events"]
    assert isinstance(task, EventStream) and isinstance(notes, EventStream)
    assert ep.tasks == ("pick the cube",) and notes.values == ("note 0", "note 1")


def check_plain(ep: Episode) -> None:
    """The plain types of `plain_messages` (and the /counter Int32s) as channels."""
    s = ep.streams
    assert s["counter/data"].values[:, 0].tolist() == [0, 1, 2, 3] and s["counter/data"].names == ("data",)
    assert s["flag/data"].values[:, 0].tolist() == [0, 1]
    floats = s["floats/data"]
    assert isinstance(floats, NumericStream) and floats.names == ("data_0", "data_1", "data_2")
    np.testing.assert_array_equal(floats.values, [[0, 2.5, -1], [7, np.nan, np.nan]])
    assert any("/floats: 1 message(s) not 3 values wide" in w for w in ep.warnings)
    assert s["joy/axes"].values.tolist() == [[0, -1], [0.5, -1]] and s["joy/buttons"].values[1].tolist() == [1, 0, 1]
    assert s["joy/buttons"].names == ("button_0", "button_1", "button_2")
    cmd = s["arm_command/position"]
    assert isinstance(cmd, NumericStream) and cmd.names == ("j1", "j2")
    assert cmd.values.tolist() == [[0, 0], [2, 1]] and cmd.origin is not None and cmd.origin.time_source == "header"
    battery = s["battery/state"]
    assert isinstance(battery, NumericStream) and battery.names[0] == "voltage"
    assert battery.values[:, 0].tolist() == [12.5, 11.5]
    assert battery.values[0, 5] == pytest.approx(0.9)
    assert s["temperature/temperature"].values[:, 0].tolist() == [20, 21]
    mag = s["imu/magnetic_field"]
    assert isinstance(mag, NumericStream) and mag.values[1].tolist() == pytest.approx([1e-5, 0, 1]) and mag.unit == "T"
    fix = s["gps/fix"]
    assert isinstance(fix, NumericStream) and fix.names == ("latitude", "longitude", "altitude")
    assert fix.values.tolist() == [[48, 11.5, 500], [49, 11.5, 500]]


def write_ros2(path: Path, records: list[Record], store: Any, storage: str = "mcap") -> Path:
    """A ROS 2 bag directory (rosbags writer, version 9) in mcap or sqlite3 storage."""
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    with Writer2(path, version=9, storage_plugin=plugin) as writer:
        conns: dict[str, Any] = {}
        for topic, msgtype, log_ns, msg in records:
            if topic not in conns:
                conns[topic] = writer.add_connection(topic, msgtype, typestore=store)
            writer.write(conns[topic], log_ns, store.serialize_cdr(msg, msgtype))
    return path


def write_ros1(path: Path, records: list[Record], store: Any, chunk_bytes: int | None = None) -> Path:
    """A ROS 1 bag (rosbags writer, uncompressed), its chunks of about `chunk_bytes` (rosbags' 1 MiB when None)."""
    with Writer1(path) as writer:
        if chunk_bytes is not None:
            writer.chunk_threshold = chunk_bytes
        conns: dict[str, Any] = {}
        for topic, msgtype, log_ns, msg in records:
            if topic not in conns:
                conns[topic] = writer.add_connection(topic, msgtype, typestore=store)
            writer.write(conns[topic], log_ns, store.serialize_ros1(msg, msgtype))
    return path


def write_mcap_ros(path: Path, records: list[Record], store: Any, ros1: bool = False,
                   compression: CompressionType = CompressionType.ZSTD) -> Path:
    """A plain MCAP of ROS messages written with the mcap writer: ros1msg/ros1 or ros2msg/cdr channels.

    ROS 1 schemas use the ROS 1 spelling of type names (`sensor_msgs/Image`), as `mcap convert` writes them.
    """
    with path.open("wb") as f:
        writer = Writer(f, chunk_size=4096, compression=compression)
        writer.start(profile="ros1" if ros1 else "ros2", library="robokit-tests")
        channels: dict[str, int] = {}
        for topic, msgtype, log_ns, msg in records:
            if topic not in channels:
                text = store.generate_msgdef(msgtype, ros_version=1 if ros1 else 2)[0]
                name = msgtype.replace("/msg/", "/") if ros1 else msgtype
                schema = writer.register_schema(name, "ros1msg" if ros1 else "ros2msg", text.encode())
                channels[topic] = writer.register_channel(topic, "ros1" if ros1 else "cdr", schema)
            data = store.serialize_ros1(msg, msgtype) if ros1 else store.serialize_cdr(msg, msgtype)
            writer.add_message(channels[topic], log_time=log_ns, data=bytes(data), publish_time=log_ns)
        writer.finish()
    return path


McapRecord = tuple[str, Any, int]  # topic, protobuf message or (schema name, JSON dict), log time


def write_foxglove(path: Path, records: list[McapRecord], chunk_size: int = 1 << 20, finish: bool = True) -> Path:
    """A plain MCAP (profile "") of Foxglove protobuf messages and JSON channels, one schema per type."""
    with path.open("wb") as f:
        writer = Writer(f, chunk_size=chunk_size, compression=CompressionType.ZSTD)
        writer.start(profile="", library="robokit-tests")
        schemas: dict[str, int] = {}
        channels: dict[str, int] = {}
        for topic, msg, log_ns in records:
            is_json = isinstance(msg, tuple)
            name = msg[0] if is_json else msg.DESCRIPTOR.full_name
            if name not in schemas:
                schemas[name] = (
                    writer.register_schema(name=name, encoding="jsonschema", data=b"{}")
                    if is_json
                    else register_schema(writer, type(msg))
                )
            if topic not in channels:
                channels[topic] = writer.register_channel(topic, "json" if is_json else "protobuf", schemas[name])
            data = json.dumps(msg[1]).encode() if is_json else msg.SerializeToString()
            writer.add_message(channels[topic], log_time=log_ns, data=data, publish_time=log_ns)
        if finish:
            writer.finish()
    return path


@pytest.fixture(scope="session")
def ros2_msgs() -> RosMsgs:
    return RosMsgs(get_typestore(Stores.LATEST))


@pytest.fixture(scope="session")
def ros1_msgs() -> RosMsgs:
    return RosMsgs(ros1_store())


@pytest.fixture(scope="session")
def bags() -> Any:
    """The generators and checks above, for test modules (importlib mode cannot import this conftest)."""
    return _Helpers()


class _Helpers:
    T0, LAG, MS, SIM_T0, DEPTH, WRIST_JPEG = T0, LAG, MS, SIM_T0, DEPTH, WRIST_JPEG
    scenario = staticmethod(scenario)
    check_scenario = staticmethod(check_scenario)
    write_ros2 = staticmethod(write_ros2)
    write_ros1 = staticmethod(write_ros1)
    write_mcap_ros = staticmethod(write_mcap_ros)
    write_foxglove = staticmethod(write_foxglove)
    front_pixels = staticmethod(front_pixels)
    jpeg = staticmethod(jpeg)

    @staticmethod
    def open_one(path: Path, mapping: Any = None, verify: bool = True) -> Episode:
        """The single episode of a recording, index pass done."""
        (ep,) = robokit.open(path, mapping, verify=verify)
        ep.streams  # noqa: B018 - run the loader now
        return ep


def null_topic_names(db3: Path, where: str = "1") -> None:
    """Damage a ROS 2 sqlite3 bag as a corrupted database can be: topic names NULL (rows matching `where`). The
    schema forbids it, so the table is first copied without that constraint."""
    with sqlite3.connect(db3) as db:
        (schema,) = db.execute("SELECT sql FROM sqlite_master WHERE name = 'topics'").fetchone()
        db.execute(schema.replace("topics", "damaged", 1).replace("name TEXT NOT NULL", "name TEXT"))
        db.execute("INSERT INTO damaged SELECT * FROM topics")
        db.execute("DROP TABLE topics")
        db.execute("ALTER TABLE damaged RENAME TO topics")
        db.execute(f"UPDATE topics SET name = NULL WHERE {where}")
