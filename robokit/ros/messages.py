"""Decoded messages (rosbags, protobuf, JSON: all read by attribute) → stream samples, for every container.

Builders accumulate one topic and build its streams at the end; images keep only timestamps and positions.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, ClassVar

import numpy as np

from robokit.errors import SourceError
from robokit.ros.detections import annotation_boxes, annotation_stamp, detection2d_boxes
from robokit.ros.fields import first_attr, frame_id, header_stamp, quat, time_ns, vec3
from robokit.ros.pixels import probe
from robokit.sources import naming
from robokit.timeline import (
    CameraInfo,
    EventStream,
    FrameSource,
    ImageStream,
    NumericStream,
    PoseStream,
    Stream,
    StreamOrigin,
)
from robokit.timeline.detections import detection_channel, encode_boxes
from robokit.timeline.streams import order_samples

HEADER_CLOCK_MAX_OFFSET_NS = 60 * 10**9
NEAR_ZERO_NS = 10 * 365 * 86400 * 10**9  # stamps before 1980: simulation time or an unset clock


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
        """Header stamps when all are non-zero, their median offset from log time is under 60 s and they
        advance with it (span at least half the log times'); else the log times."""
        return (self._stamps(), "header") if not self._header_problem() else (self._logs(), "log")

    def _stamps(self) -> np.ndarray:
        return np.asarray(self.stamps, dtype=np.int64)

    def _logs(self) -> np.ndarray:
        return np.asarray(self.logs, dtype=np.int64)

    def _header_problem(self) -> str:
        """Why the header stamps are not the clock ("" when they are)."""
        stamps, logs = self._stamps(), self._logs()
        if not len(stamps) or np.any(stamps == 0):
            return "unset"
        offset = float(np.median(np.abs(stamps.astype(np.float64) - logs.astype(np.float64))))
        if offset >= HEADER_CLOCK_MAX_OFFSET_NS:
            return f"header stamps are {offset / 1e9:.3g} s from the log time (simulation time or another clock)"
        log_span = int(logs.max() - logs.min())
        if log_span > 0 and int(stamps.max() - stamps.min()) < log_span // 2:
            return "header stamps do not advance with the log time"
        return ""

    def notes(self, topic: str) -> list[str]:
        """Warnings on the chosen clock: header stamps far from log time or not advancing, stamps near zero."""
        times, source = self.resolve()
        notes = []
        problem = self._header_problem()
        if problem not in ("", "unset"):
            notes.append(f"{topic}: {problem}; using the log time")
        if len(times) and int(times.max()) < NEAR_ZERO_NS:
            notes.append(f"{topic}: {source} timestamps near zero (simulation time or an unset clock, last at "
                         f"{int(times.max()) / 1e9:.3f} s); kept as recorded")
        return notes


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

    def ordered(
        self, name: str, samples: Sequence[int], content: Callable[[int], Hashable] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Sorted unique timestamps of `samples` (clock indices) and which samples they keep.

        A sample is a duplicate only when its timestamp and its `content` (of its index in `samples`) equal
        an earlier one's; samples sharing a timestamp with other content stay, in recorded order, 1 ns apart.
        """
        if self._times is None:
            self._times, source = self.clock.resolve()
            self.origin = StreamOrigin(self.topic, self.msgtype, source)
            self.warnings.extend(self.clock.notes(self.topic))
        idx = np.asarray(samples, dtype=np.int64)
        ts, keep, dropped, moved = order_samples(self._times[idx], content)
        if dropped:
            self.warnings.append(
                f"{self.topic}: {dropped} sample(s) of {name} dropped (same timestamp and content as an earlier one)"
            )
        if moved:
            self.warnings.append(
                f"{self.topic}: {moved} sample(s) of {name} share a timestamp with different content; "
                "kept in recorded order, 1 ns apart"
            )
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
        ts, keep = b.ordered(name, self.samples, lambda i: (self.t[i], self.q[i]))
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
        values = np.asarray(self.rows, dtype=np.float64).reshape(len(self.rows), len(names))
        ts, keep = b.ordered(name, self.samples, lambda i: values[i].tobytes())
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
            self.layout = probe(msg, self.msgtype)
            self.frame_id = frame_id(msg)
        self.positions.append(position)
        self.clock.add(header_stamp(msg), log_time)

    def build(self) -> list[Stream]:
        if self.layout is None:
            return []
        width, height, encoding, fmt = self.layout
        name = naming.image_channel(self.topic, encoding in ("16UC1", "mono16", "32FC1"))
        ts, keep = self.ordered(name, range(len(self.positions)), self._content())
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

    def _content(self) -> Callable[[int], Hashable]:
        """Frame i's digest, to tell a repeated frame from another one at the same time.

        Only frames sharing a timestamp are ever asked for; they are re-read from the source together on the
        first request, so the index pass never hashes pixels. A frame that cannot be re-read counts as unique."""
        digests: dict[int, Hashable] = {}

        def content(i: int) -> Hashable:
            if not digests:
                digests.update(self._shared_digests())
            return digests[i]

        return content

    def _shared_digests(self) -> dict[int, Hashable]:
        assert self._times is not None and self.source is not None  # resolved by `ordered`; set by the Collector
        _, inverse, counts = np.unique(self._times, return_inverse=True, return_counts=True)
        shared = [int(i) for i in np.flatnonzero(counts[inverse] > 1)]
        digests: dict[int, Hashable] = {i: ("unread", i) for i in shared}
        done = 0
        try:
            for i, frame in zip(shared, self.source.iter_frames([self.positions[i] for i in shared]), strict=False):
                content = frame.data if frame.data is not None else np.ascontiguousarray(frame.array()).data
                digests[i] = zlib.crc32(content)
                done += 1
        except SourceError as err:
            self.warnings.append(f"{self.topic}: {len(shared) - done} frame(s) sharing a timestamp could not be "
                                 f"re-read to tell repeats ({err}); kept")
        return digests


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

    def channel(self) -> str:
        return naming.event_channel(self.topic)

    def build(self) -> list[Stream]:
        if not self.values:
            return []
        name = self.channel()
        ts, keep = self.ordered(name, range(len(self.values)), self.values.__getitem__)
        return [EventStream(name, ts, tuple(self.values[i] for i in keep), origin=self.origin)]


_DETECTION_TOKENS = frozenset({"detections", "detection", "detected_objects", "objects", "annotations",
                               "image_annotations", "bboxes", "boxes"})


class DetectionBuilder(EventBuilder):
    """`<camera>/detections`: each message's boxes as one JSON event (robokit.timeline.detections), in pixels."""

    def add(self, msg: Any, log_time: int, position: int) -> None:
        if self.msgtype == "foxglove.ImageAnnotations":
            boxes, stamp = annotation_boxes(msg), header_stamp(msg) or time_ns(annotation_stamp(msg))
        else:
            boxes, stamp = detection2d_boxes(msg), header_stamp(msg)
        self.values.append(encode_boxes(boxes))
        self.clock.add(stamp, log_time)

    def channel(self) -> str:
        return detection_channel(naming.topic_name(self.topic, naming.CAMERA_TOKENS | _DETECTION_TOKENS, "camera"))


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
    "vision_msgs/msg/Detection2DArray": DetectionBuilder,
    "foxglove.ImageAnnotations": DetectionBuilder,
}


def builder_for(topic: str, msgtype: str) -> TopicBuilder | None:
    """A builder for the topic's (normalised) type, None when the type is not mapped."""
    from robokit.ros.plain import PLAIN_BUILDERS  # imports this module: looked up at call time

    cls = BUILDERS.get(msgtype) or PLAIN_BUILDERS.get(msgtype)
    return cls(topic, msgtype) if cls else None
