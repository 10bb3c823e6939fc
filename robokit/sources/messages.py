"""Decoded messages → stream samples, written once for every container and decoder.

Messages arrive as objects with attributes: rosbags and mcap_ros2 classes, protobuf messages (Foxglove
schemas) or JSON dicts wrapped by `wrap_json`. Builders accumulate one topic's samples and produce its
streams at the end, sorted with duplicates dropped; images keep only timestamps and frame positions.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import numpy as np
from PIL import Image

from robokit.sources import naming
from robokit.timeline import (
    CameraInfo,
    EventStream,
    Frame,
    FrameSource,
    ImageStream,
    NumericStream,
    PoseStream,
    Stream,
    StreamOrigin,
)
from robokit.timeline.streams import sort_timestamps

HEADER_CLOCK_MAX_OFFSET_NS = 60 * 10**9


class UnsupportedMessage(ValueError):
    """The topic's messages cannot be mapped (e.g. an unknown image encoding): skip the whole topic."""


def normalize_type(name: str) -> str:
    """One spelling per type: `sensor_msgs/Image` → `sensor_msgs/msg/Image`; `foxglove_msgs/msg/X` → `foxglove.X`."""
    if name.startswith("foxglove_msgs/"):
        return "foxglove." + name.rsplit("/", 1)[1]
    parts = name.split("/")
    return f"{parts[0]}/msg/{parts[1]}" if len(parts) == 2 else name


class JsonMessage:
    """Attribute access over a decoded JSON object, so JSON channels share the object mapping."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> Any:
        try:
            return wrap_json(self._data[name])
        except KeyError:
            raise AttributeError(name) from None


def wrap_json(value: Any) -> Any:
    """Dicts (nested, also inside lists) become `JsonMessage`s; other values stay as they are."""
    if isinstance(value, dict):
        return JsonMessage(value)
    if isinstance(value, list):
        return [wrap_json(v) for v in value]
    return value


def first_attr(obj: Any, *names: str, default: Any = None) -> Any:
    """The first of `names` present on `obj` (ROS 1 `K` vs ROS 2 `k`, protobuf vs ROS spellings)."""
    for name in names:
        value = getattr(obj, name, None)
        if value is not None:
            return value
    return default


_TIME_FIELDS = (("sec", "nanosec"), ("secs", "nsecs"), ("seconds", "nanos"), ("sec", "nsec"))


def time_ns(stamp: Any) -> int:
    """ns of a ROS 2 / rosbags (`sec, nanosec`), mcap_ros1 (`secs, nsecs`), protobuf or Foxglove JSON time."""
    if stamp is None:
        return 0
    for sec, nsec in _TIME_FIELDS:
        s, n = getattr(stamp, sec, None), getattr(stamp, nsec, None)
        if s is not None and n is not None:
            return int(s) * 1_000_000_000 + int(n)
    return 0


def header_stamp(msg: Any) -> int:
    """The message's own time (`header.stamp`, or Foxglove `timestamp`), 0 when it has none."""
    header = getattr(msg, "header", None)
    if header is not None:
        return time_ns(getattr(header, "stamp", None))
    return time_ns(getattr(msg, "timestamp", None))


def frame_id(msg: Any) -> str:
    """The frame of a ROS message (`header.frame_id`) or a Foxglove one (`frame_id`)."""
    return str(getattr(getattr(msg, "header", msg), "frame_id", ""))


def as_bytes(data: Any) -> bytes:
    """Message byte fields as bytes: numpy views, lists, protobuf bytes, or base64 strings (JSON)."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return base64.b64decode(data)
    if isinstance(data, np.ndarray):
        return data.tobytes()
    return bytes(data)


def vec3(v: Any) -> tuple[float, float, float]:
    return (float(getattr(v, "x", 0.0)), float(getattr(v, "y", 0.0)), float(getattr(v, "z", 0.0)))


def quat(q: Any) -> tuple[float, float, float, float]:
    """A quaternion as xyzw; an unset one (None, or all zero as protobuf defaults it) is the identity."""
    xyzw = (0.0, 0.0, 0.0, 0.0) if q is None else (float(q.x), float(q.y), float(q.z), float(q.w))
    return xyzw if any(xyzw) else (0.0, 0.0, 0.0, 1.0)


# --- images -------------------------------------------------------------------------------------------

# encoding → (dtype, channels, encoding of the decoded frame)
RAW_LAYOUTS: dict[str, tuple[str, int, str]] = {
    "rgb8": ("u1", 3, "rgb8"),
    "bgr8": ("u1", 3, "rgb8"),
    "8UC3": ("u1", 3, "rgb8"),
    "rgba8": ("u1", 4, "rgba8"),
    "bgra8": ("u1", 4, "rgba8"),
    "mono8": ("u1", 1, "mono8"),
    "8UC1": ("u1", 1, "mono8"),
    "mono16": ("u2", 1, "mono16"),
    "16UC1": ("u2", 1, "16UC1"),
    "32FC1": ("f4", 1, "32FC1"),
}
_BGR = ("bgr8", "bgra8")
_PIL_ENCODINGS = {"L": "mono8", "I;16": "16UC1", "I;16B": "16UC1", "I": "16UC1", "RGBA": "rgba8"}
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_JPEG_MAGIC = b"\xff\xd8"
COMPRESSED_TYPES = ("sensor_msgs/msg/CompressedImage", "foxglove.CompressedImage")


def raw_pixels(msg: Any) -> np.ndarray:
    """A raw image as (H, W[, C]) in native byte order: row padding (`step`) dropped, bgr → rgb."""
    encoding = str(msg.encoding)
    if encoding not in RAW_LAYOUTS:
        raise UnsupportedMessage(f"unsupported image encoding {encoding!r}")
    dtype, channels, _ = RAW_LAYOUTS[encoding]
    height, width = int(msg.height), int(msg.width)
    row = width * channels * int(dtype[1])
    step = int(msg.step) or row
    data = msg.data
    buf = data.view(np.uint8).reshape(-1) if isinstance(data, np.ndarray) else np.frombuffer(as_bytes(data), np.uint8)
    if step < row or buf.size < height * step:
        raise ValueError(f"image data of {buf.size} bytes is too short for {width}x{height} {encoding} step {step}")
    rows = np.ascontiguousarray(buf[: height * step].reshape(height, step)[:, :row])
    order = ">" if int(getattr(msg, "is_bigendian", 0) or 0) else "<"
    pixels = rows.view(np.dtype(order + dtype)).reshape((height, width, channels) if channels > 1 else (height, width))
    pixels = pixels.astype(np.dtype(dtype).newbyteorder("="), copy=not pixels.flags.writeable)
    if encoding in _BGR:
        pixels = pixels[..., [2, 1, 0, 3][:channels]]
    return pixels


def encoded_bytes(msg: Any) -> tuple[str, bytes]:
    """(jpeg|png, bytes) of a compressed image; ROS `compressedDepth` loses its 12-byte header."""
    data = as_bytes(msg.data)
    if data.startswith(_JPEG_MAGIC):
        return "jpeg", data
    if data.startswith(_PNG_MAGIC):
        return "png", data
    if data[12:20] == _PNG_MAGIC:
        return "png", data[12:]
    raise UnsupportedMessage(f"unsupported compressed image format {getattr(msg, 'format', '')!r}")


def image_frame(msg: Any, msgtype: str) -> Frame:
    """One image message as a Frame: JPEG/PNG bytes kept as they are, raw images decoded."""
    if msgtype in COMPRESSED_TYPES:
        fmt, data = encoded_bytes(msg)
        return Frame(fmt, data=data)
    return Frame("raw", pixels=raw_pixels(msg))


def _probe(msg: Any, msgtype: str) -> tuple[int, int, str, str]:
    """(width, height, decoded encoding, storage format) of a first frame, without keeping pixels."""
    if msgtype in COMPRESSED_TYPES:
        fmt, data = encoded_bytes(msg)
        with Image.open(io.BytesIO(data)) as im:
            return im.width, im.height, _PIL_ENCODINGS.get(im.mode, "rgb8"), fmt
    encoding = str(msg.encoding)
    if encoding not in RAW_LAYOUTS:
        raise UnsupportedMessage(f"unsupported image encoding {encoding!r}")
    return int(msg.width), int(msg.height), RAW_LAYOUTS[encoding][2], "raw"


# --- builders -----------------------------------------------------------------------------------------


class Clock:
    """Header stamps and log times of one topic's samples; picks the clock the streams are stamped with."""

    def __init__(self) -> None:
        self.stamps: list[int] = []
        self.logs: list[int] = []

    def add(self, stamp: int, log_time: int) -> int:
        self.stamps.append(stamp)
        self.logs.append(log_time)
        return len(self.logs) - 1

    def resolve(self) -> tuple[np.ndarray, str]:
        """Header stamps when all are non-zero and their median offset from log time is under 60 s."""
        stamps = np.asarray(self.stamps, dtype=np.int64)
        logs = np.asarray(self.logs, dtype=np.int64)
        if len(stamps) and np.all(stamps != 0):
            offset = np.median(np.abs(stamps.astype(np.float64) - logs.astype(np.float64)))
            if offset < HEADER_CLOCK_MAX_OFFSET_NS:
                return stamps, "header"
        return logs, "log"


class TopicBuilder:
    """Accumulates one topic's messages; `build` returns its streams with default channel names."""

    multi: ClassVar[bool] = False  # several channels per topic: a user mapping renames the group
    lazy_frames: ClassVar[bool] = False  # needs a FrameSource over the topic's messages

    def __init__(self, topic: str, msgtype: str) -> None:
        self.topic = topic
        self.msgtype = msgtype
        self.clock = Clock()
        self.warnings: list[str] = []
        self._times: np.ndarray | None = None
        self.origin = StreamOrigin(topic, msgtype)

    def add(self, msg: Any, log_time: int, position: int) -> None:
        raise NotImplementedError

    def build(self) -> list[Stream]:
        raise NotImplementedError

    def ordered(self, name: str, samples: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Sorted unique timestamps of `samples` (clock indices) and which samples they keep."""
        if self._times is None:
            self._times, source = self.clock.resolve()
            self.origin = StreamOrigin(self.topic, self.msgtype, source)
        idx = np.asarray(samples, dtype=np.int64)
        ts, keep, dropped = sort_timestamps(self._times[idx])
        if dropped:
            self.warnings.append(f"{self.topic}: {dropped} sample(s) of {name} dropped (duplicate timestamps)")
        return ts, keep


class _Poses:
    """Samples of one pose series: clock indices, translations, xyzw quaternions."""

    def __init__(self, parent: str) -> None:
        self.parent = parent
        self.samples: list[int] = []
        self.t: list[tuple[float, float, float]] = []
        self.q: list[tuple[float, float, float, float]] = []

    def add(self, sample: int, translation: tuple[float, float, float], q: tuple[float, float, float, float]) -> None:
        self.samples.append(sample)
        self.t.append(translation)
        self.q.append(q)

    def stream(self, b: TopicBuilder, name: str, child: str, static: bool = False) -> PoseStream:
        ts, keep = b.ordered(name, self.samples)
        return PoseStream(
            name,
            ts,
            np.asarray(self.t).reshape(-1, 3)[keep],
            np.asarray(self.q).reshape(-1, 4)[keep],
            parent_frame=self.parent,
            child_frame=child,
            static=static,
            origin=b.origin,
        )


class _Rows:
    """Samples of one numeric series: clock indices and value rows."""

    def __init__(self) -> None:
        self.samples: list[int] = []
        self.rows: list[Sequence[float] | np.ndarray] = []

    def add(self, sample: int, row: Sequence[float] | np.ndarray) -> None:
        self.samples.append(sample)
        self.rows.append(row)

    def stream(self, b: TopicBuilder, name: str, names: Sequence[str], unit: str) -> NumericStream:
        ts, keep = b.ordered(name, self.samples)
        values = np.asarray(self.rows, dtype=np.float64).reshape(len(self.rows), len(names))
        return NumericStream(name, ts, values[keep], tuple(names), unit, origin=b.origin)


_JOINT_FIELDS = {"position": "rad", "velocity": "rad/s", "effort": "N·m"}


class JointStateBuilder(TopicBuilder):
    """`<group>/position|velocity|effort`; joint order fixed by the first message, later ones mapped by name."""

    multi = True

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.names: list[str] | None = None
        self.index: dict[str, int] = {}
        self.rows = {f: _Rows() for f in _JOINT_FIELDS}
        self.present = dict.fromkeys(_JOINT_FIELDS, False)
        self.unknown: set[str] = set()

    def _joints(self, msg: Any) -> tuple[list[str], dict[str, np.ndarray]]:
        if self.msgtype == "foxglove.JointStates":
            joints = list(msg.joints)
            values = {
                f: np.array([getattr(j, f) if _has(j, f) else np.nan for j in joints], dtype=np.float64)
                if any(_has(j, f) for j in joints)
                else np.zeros(0)
                for f in _JOINT_FIELDS
            }
            return [str(j.name) for j in joints], values
        values = {f: np.asarray(getattr(msg, f), dtype=np.float64).reshape(-1) for f in _JOINT_FIELDS}
        return [str(n) for n in msg.name], values

    def add(self, msg: Any, log_time: int, position: int) -> None:
        names, values = self._joints(msg)
        width = max([len(names)] + [len(v) for v in values.values()])
        names += [f"joint_{i}" for i in range(len(names), width)]
        if self.names is None:
            self.names = names
            self.index = {n: i for i, n in enumerate(names)}
        same = names == self.names
        sample = self.clock.add(header_stamp(msg), log_time)
        for field, vals in values.items():
            self.present[field] |= len(vals) > 0
            if same and len(vals) == len(names):
                self.rows[field].add(sample, vals)
                continue
            row = np.full(len(self.names), np.nan)
            for name, v in zip(names, vals, strict=False):
                col = self.index.get(name)
                if col is None:
                    self.unknown.add(name)
                else:
                    row[col] = v
            self.rows[field].add(sample, row)

    def build(self) -> list[Stream]:
        if self.unknown:
            self.warnings.append(f"{self.topic}: joints {sorted(self.unknown)} not in the first message, ignored")
        group = naming.joints_group(self.topic)
        names = self.names or []
        return [
            self.rows[f].stream(self, f"{group}/{f}", names, unit)
            for f, unit in _JOINT_FIELDS.items()
            if self.present[f]
        ]


def _has(msg: Any, field: str) -> bool:
    """Presence of an optional field: protobuf `HasField`, else a non-None attribute."""
    has_field = getattr(msg, "HasField", None)
    if has_field is not None:
        return bool(has_field(field))
    return getattr(msg, field, None) is not None


class ImageBuilder(TopicBuilder):
    """`<camera>/rgb|depth`: per-frame timestamps and positions; pixels stay in the recording."""

    lazy_frames = True

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.positions: list[int] = []
        self.layout: tuple[int, int, str, str] | None = None
        self.frame_id = ""
        self.source: FrameSource | None = None
        self.camera_key = naming.camera_name(topic)

    def add(self, msg: Any, log_time: int, position: int) -> None:
        if self.layout is None:
            self.layout = _probe(msg, self.msgtype)
            self.frame_id = frame_id(msg)
        self.positions.append(position)
        self.clock.add(header_stamp(msg), log_time)

    def build(self) -> list[Stream]:
        if self.layout is None:
            return []
        width, height, encoding, fmt = self.layout
        name = naming.image_channel(self.topic, encoding in ("16UC1", "mono16", "32FC1"))
        ts, keep = self.ordered(name, range(len(self.positions)))
        positions = np.asarray(self.positions, dtype=np.int64)[keep]
        return [
            ImageStream(
                name,
                ts,
                source=self.source,
                positions=positions,
                width=width,
                height=height,
                encoding=encoding,
                format=fmt,
                frame_id=self.frame_id,
                origin=self.origin,
            )
        ]


class CameraInfoBuilder(TopicBuilder):
    """Intrinsics of a camera (first calibrated message); attached to that camera's image streams."""

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.info: CameraInfo | None = None
        self.camera_key = naming.camera_name(topic)

    def add(self, msg: Any, log_time: int, position: int) -> None:
        if self.info is not None:
            return
        k = np.asarray(first_attr(msg, "k", "K", default=()), dtype=np.float64)
        if k.size == 9 and k[0] != 0:
            self.info = CameraInfo(
                width=int(msg.width),
                height=int(msg.height),
                k=k.reshape(3, 3),
                distortion=np.asarray(first_attr(msg, "d", "D", default=()), dtype=np.float64),
                distortion_model=str(msg.distortion_model),
                frame_id=frame_id(msg),
            )

    def build(self) -> list[Stream]:
        return []


class TFBuilder(TopicBuilder):
    """`tf/<child>` per child frame; `/tf_static` streams are static."""

    multi = True

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.children: dict[str, _Poses] = {}
        self.reparented = 0
        self.static = naming.tokens(topic) == ["tf_static"]

    def _transforms(self, msg: Any) -> Iterator[Any]:
        if self.msgtype in ("geometry_msgs/msg/TransformStamped", "foxglove.FrameTransform"):
            yield msg
        else:
            yield from msg.transforms

    def add(self, msg: Any, log_time: int, position: int) -> None:
        for tf in self._transforms(msg):
            if self.msgtype.startswith("foxglove."):
                parent, child = tf.parent_frame_id, tf.child_frame_id
                stamp, t, q = time_ns(tf.timestamp), tf.translation, tf.rotation
            else:
                parent, child = tf.header.frame_id, tf.child_frame_id
                stamp, t, q = time_ns(tf.header.stamp), tf.transform.translation, tf.transform.rotation
            parent, child = naming.frame_name(str(parent)), naming.frame_name(str(child))
            series = self.children.setdefault(child, _Poses(parent))
            if series.parent != parent:
                self.reparented += 1
                continue
            series.add(self.clock.add(stamp, log_time), vec3(t), quat(q))

    def build(self) -> list[Stream]:
        if self.reparented:
            self.warnings.append(f"{self.topic}: dropped {self.reparented} transforms that changed a frame's parent")
        return [s.stream(self, f"tf/{child}", child, self.static) for child, s in self.children.items()]


class PoseBuilder(TopicBuilder):
    """`<name>/pose` (PoseStamped, PoseWithCovarianceStamped, Foxglove PoseInFrame)."""

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.name = naming.topic_name(topic, frozenset({"pose"}), "pose")
        self.series: _Poses | None = None

    def add(self, msg: Any, log_time: int, position: int) -> None:
        pose = msg.pose.pose if self.msgtype.endswith("WithCovarianceStamped") else msg.pose
        if self.series is None:
            self.series = _Poses(naming.frame_name(frame_id(msg)))
        self.series.add(self.clock.add(header_stamp(msg), log_time), vec3(pose.position), quat(pose.orientation))

    def build(self) -> list[Stream]:
        return [self.series.stream(self, f"{self.name}/pose", self.name)] if self.series else []


class PosesBuilder(TopicBuilder):
    """`<name>/pose_<i>` for the i-th pose of PoseArray / Foxglove PosesInFrame messages."""

    multi = True

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.name = naming.topic_name(topic, frozenset({"poses"}), "poses")
        self.series: list[_Poses] = []

    def add(self, msg: Any, log_time: int, position: int) -> None:
        sample = self.clock.add(header_stamp(msg), log_time)
        for i, pose in enumerate(msg.poses):
            if i == len(self.series):
                self.series.append(_Poses(naming.frame_name(frame_id(msg))))
            self.series[i].add(sample, vec3(pose.position), quat(pose.orientation))

    def build(self) -> list[Stream]:
        return [s.stream(self, f"{self.name}/pose_{i}", f"{self.name}_{i}") for i, s in enumerate(self.series)]


TWIST_NAMES = ("linear.x", "linear.y", "linear.z", "angular.x", "angular.y", "angular.z")
TWIST_UNIT = "m/s, rad/s"
WRENCH_NAMES = ("force.x", "force.y", "force.z", "torque.x", "torque.y", "torque.z")
WRENCH_UNIT = "N, N·m"


class TwistBuilder(TopicBuilder):
    """`<name>/twist`: 6 dims linear.x … angular.z (Twist, TwistStamped, TwistWithCovarianceStamped)."""

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.name = naming.topic_name(topic, frozenset({"twist"}), "twist")
        self.rows = _Rows()

    def add(self, msg: Any, log_time: int, position: int) -> None:
        twist = msg
        while hasattr(twist, "twist"):  # Stamped and WithCovariance wrappers
            twist = twist.twist
        self.rows.add(self.clock.add(header_stamp(msg), log_time), vec3(twist.linear) + vec3(twist.angular))

    def build(self) -> list[Stream]:
        return [self.rows.stream(self, f"{self.name}/twist", TWIST_NAMES, TWIST_UNIT)] if self.rows.rows else []


class WrenchBuilder(TopicBuilder):
    """`<name>/wrench`: 6 dims force.x … torque.z (Wrench, WrenchStamped)."""

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.name = naming.topic_name(topic, frozenset({"wrench"}), "wrench")
        self.rows = _Rows()

    def add(self, msg: Any, log_time: int, position: int) -> None:
        wrench = getattr(msg, "wrench", msg)
        self.rows.add(self.clock.add(header_stamp(msg), log_time), vec3(wrench.force) + vec3(wrench.torque))

    def build(self) -> list[Stream]:
        return [self.rows.stream(self, f"{self.name}/wrench", WRENCH_NAMES, WRENCH_UNIT)] if self.rows.rows else []


class OdometryBuilder(TopicBuilder):
    """`<name>/pose` and `<name>/twist` from nav_msgs Odometry or Foxglove Odometry."""

    multi = True

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.name = naming.topic_name(topic, frozenset({"odom", "odometry"}), "odom")
        self.poses: _Poses | None = None
        self.child = self.name
        self.rows = _Rows()

    def add(self, msg: Any, log_time: int, position: int) -> None:
        sample = self.clock.add(header_stamp(msg), log_time)
        if self.msgtype == "foxglove.Odometry":
            pose, twist = msg.pose, vec3(msg.linear_velocity) + vec3(msg.angular_velocity)
            child = msg.body_frame_id
        else:
            pose, twist = msg.pose.pose, vec3(msg.twist.twist.linear) + vec3(msg.twist.twist.angular)
            child = msg.child_frame_id
        if self.poses is None:
            self.poses = _Poses(naming.frame_name(frame_id(msg)))
            self.child = naming.frame_name(str(child)) or self.name
        self.poses.add(sample, vec3(pose.position), quat(pose.orientation))
        self.rows.add(sample, twist)

    def build(self) -> list[Stream]:
        if self.poses is None:
            return []
        return [
            self.poses.stream(self, f"{self.name}/pose", self.child),
            self.rows.stream(self, f"{self.name}/twist", TWIST_NAMES, TWIST_UNIT),
        ]


class ImuBuilder(TopicBuilder):
    """`<name>/orientation` (pose, zero translation), `<name>/angular_velocity`, `<name>/linear_acceleration`."""

    multi = True

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.name = naming.topic_name(topic, frozenset({"imu", "data", "data_raw"}), "imu")
        self.orientation: _Poses | None = None
        self.frame = self.name
        self.gyro = _Rows()
        self.accel = _Rows()

    def add(self, msg: Any, log_time: int, position: int) -> None:
        sample = self.clock.add(header_stamp(msg), log_time)
        if self.orientation is None:
            self.orientation = _Poses("")
            self.frame = naming.frame_name(frame_id(msg)) or self.name
        covariance = np.asarray(msg.orientation_covariance, dtype=np.float64)
        if not (covariance.size and covariance[0] == -1):  # -1: the IMU gives no orientation
            self.orientation.add(sample, (0.0, 0.0, 0.0), quat(msg.orientation))
        self.gyro.add(sample, vec3(msg.angular_velocity))
        self.accel.add(sample, vec3(msg.linear_acceleration))

    def build(self) -> list[Stream]:
        if self.orientation is None:
            return []
        xyz = ("x", "y", "z")
        streams: list[Stream] = []
        if self.orientation.samples:
            streams.append(self.orientation.stream(self, f"{self.name}/orientation", self.frame))
        streams.append(self.gyro.stream(self, f"{self.name}/angular_velocity", xyz, "rad/s"))
        streams.append(self.accel.stream(self, f"{self.name}/linear_acceleration", xyz, "m/s²"))
        return streams


class EventBuilder(TopicBuilder):
    """`task` or `<name>/events` from std_msgs String and Foxglove Log messages."""

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.values: list[str] = []

    def add(self, msg: Any, log_time: int, position: int) -> None:
        self.values.append(str(msg.message if self.msgtype == "foxglove.Log" else msg.data))
        self.clock.add(header_stamp(msg), log_time)

    def build(self) -> list[Stream]:
        if not self.values:
            return []
        name = naming.event_channel(self.topic)
        ts, keep = self.ordered(name, range(len(self.values)))
        return [EventStream(name, ts, tuple(self.values[i] for i in keep), origin=self.origin)]


BUILDERS: dict[str, type[TopicBuilder]] = {
    "sensor_msgs/msg/JointState": JointStateBuilder,
    "foxglove.JointStates": JointStateBuilder,
    "sensor_msgs/msg/Image": ImageBuilder,
    "sensor_msgs/msg/CompressedImage": ImageBuilder,
    "foxglove.RawImage": ImageBuilder,
    "foxglove.CompressedImage": ImageBuilder,
    "sensor_msgs/msg/CameraInfo": CameraInfoBuilder,
    "foxglove.CameraCalibration": CameraInfoBuilder,
    "tf2_msgs/msg/TFMessage": TFBuilder,
    "tf/msg/tfMessage": TFBuilder,
    "geometry_msgs/msg/TransformStamped": TFBuilder,
    "foxglove.FrameTransform": TFBuilder,
    "foxglove.FrameTransforms": TFBuilder,
    "geometry_msgs/msg/PoseStamped": PoseBuilder,
    "geometry_msgs/msg/PoseWithCovarianceStamped": PoseBuilder,
    "foxglove.PoseInFrame": PoseBuilder,
    "geometry_msgs/msg/PoseArray": PosesBuilder,
    "foxglove.PosesInFrame": PosesBuilder,
    "geometry_msgs/msg/Twist": TwistBuilder,
    "geometry_msgs/msg/TwistStamped": TwistBuilder,
    "geometry_msgs/msg/TwistWithCovarianceStamped": TwistBuilder,
    "geometry_msgs/msg/Wrench": WrenchBuilder,
    "geometry_msgs/msg/WrenchStamped": WrenchBuilder,
    "nav_msgs/msg/Odometry": OdometryBuilder,
    "foxglove.Odometry": OdometryBuilder,
    "sensor_msgs/msg/Imu": ImuBuilder,
    "std_msgs/msg/String": EventBuilder,
    "foxglove.Log": EventBuilder,
}


def builder_for(topic: str, msgtype: str) -> TopicBuilder | None:
    """A builder for the topic's (normalised) type, None when the type is not mapped."""
    cls = BUILDERS.get(msgtype)
    return cls(topic, msgtype) if cls else None
