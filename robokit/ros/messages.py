"""Decoded messages (rosbags, protobuf, JSON: all read by attribute) → stream samples, for every container.

Builders accumulate one topic and build its streams at the end; images keep only timestamps and positions.
Joints, images, calibration, TF, events and detections are here, motion types in `motion.py`, the shared base
(clock, ordering, series) in `topic_builder.py`; `BUILDERS` maps every typed builder by message type.
"""

from __future__ import annotations

import zlib
from array import array
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

import numpy as np

from robokit import heap
from robokit.errors import SourceError
from robokit.ros.detections import annotation_boxes, annotation_stamp, detection2d_boxes
from robokit.ros.fields import first_attr, frame_id, header_stamp, quat, time_ns, vec3
from robokit.ros.motion import ImuBuilder, OdometryBuilder, PoseBuilder, PosesBuilder, TwistBuilder, WrenchBuilder
from robokit.ros.pixels import COMPRESSED_TYPES, frame_layout, probe
from robokit.ros.topic_builder import Poses, Rows, TopicBuilder
from robokit.ros.video import FFMPEG_PACKET, VideoTrack, video_codec
from robokit.sources import naming
from robokit.timeline import (
    CameraInfo,
    EventStream,
    FrameSource,
    ImageStream,
    Stream,
)
from robokit.timeline.detections import detection_channel, encode_boxes
from robokit.timeline.losses import Loss

MAX_LAYOUTS = 255  # raw frame sizes and encodings one image topic may mix (a byte per frame says which)
_JOINT_FIELDS = {"position": "rad", "velocity": "rad/s", "effort": "N·m"}


class JointStateBuilder(TopicBuilder):
    """`<group>/position|velocity|effort`; joint order fixed by the first message, later ones mapped by name."""

    multi = True

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.names: list[str] | None = None
        self.index: dict[str, int] = {}
        self.rows = {f: Rows() for f in _JOINT_FIELDS}
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
        self.positions = heap.Ints()  # each frame's place among the topic's messages
        self.layout: tuple[int, int, str, str] | None = None
        self.frame_id = ""
        self.source: FrameSource | None = None
        self.camera_key = naming.camera_name(topic)
        self.video: VideoTrack | None = None  # coded video: frames decode from the topic's packets
        self.layouts: dict[tuple[int, int, str, str], int] = {}  # raw frames' sizes and encodings, by first seen
        self.kinds = array("B")  # each frame's place in `layouts` (raw frames)

    def add(self, msg: Any, log_time: int, position: int) -> None:
        if self.layout is None and self.video is None:
            codec = video_codec(msg, self.msgtype)
            self.video = VideoTrack(codec, self.topic) if codec else None
            self.layout = None if self.video else probe(msg, self.msgtype)
            self.frame_id = frame_id(msg)
            layout = self.layout
        else:  # a frame that cannot decode (raw data too short, no JPEG/PNG) fails here: counted, left out
            layout = frame_layout(msg, self.msgtype, self.layout[3]) if self.layout is not None else None
        raw = None if self.msgtype in COMPRESSED_TYPES else layout  # compressedDepth decodes to raw too: not tracked
        if raw is not None and raw not in self.layouts and len(self.layouts) == MAX_LAYOUTS:
            raise ValueError(f"a {raw[0]}x{raw[1]} {raw[2]} frame: over {MAX_LAYOUTS} sizes in one topic")
        if self.video is not None:
            self.video.add(msg, self.msgtype, position)
        self.clock.add(header_stamp(msg), log_time)
        self.positions.append(position)
        if raw is not None:
            self.kinds.append(self.layouts.setdefault(raw, len(self.layouts)))

    def headers_suffice(self) -> bool:
        """Still images after the first (which gave the layout): only their stamps are read here."""
        return self.layout is not None and self.video is None

    def build(self) -> list[Stream]:
        source = self.source
        if self.video is not None:
            if self.video.size is None:
                self.warnings.append(f"{self.topic}: no {self.video.codec} keyframe decodes, so no frame does")
                return []
            self.layout = self.video.layout()
            source = self.video.frames(source, self.topic) if source is not None else None
        if self.layout is None:
            return []
        positions = self.positions.array()
        samples: Sequence[int] = range(len(positions))
        if len(self.layouts) > 1:  # frames of one size and encoding make a stream: the most common one's
            samples = self._one_layout()
        width, height, encoding, fmt = self.layout
        name = naming.image_channel(self.topic, encoding in ("16UC1", "mono16", "32FC1"))
        if self.video is not None:  # frames before the first keyframe cannot be decoded
            first = self.video.first_keyframe()
            samples = range(int(np.searchsorted(positions, first)), len(positions))
            if samples.start:
                self.warnings.append(f"{self.topic}: {samples.start} frame(s) before the first keyframe dropped "
                                     "(they cannot be decoded)")
        content = self._content(positions)
        ts, keep = self.ordered(name, samples, lambda i: content(samples[i]))
        return [
            ImageStream(
                name,
                ts,
                source=source,
                positions=positions[np.asarray(samples, dtype=np.int64)][keep],
                width=width,
                height=height,
                encoding=encoding,
                format=fmt,
                frame_id=self.frame_id,
                origin=self.origin,
            )
        ]

    def _one_layout(self) -> list[int]:
        """The frames of the topic's most common raw layout (the first seen on a tie), the others left out as a
        warning and a loss; sets `layout` to it."""
        kinds = np.frombuffer(self.kinds, np.uint8)
        counts = np.bincount(kinds)
        best = int(np.argmax(counts))
        layouts = list(self.layouts)
        self.layout = layouts[best]
        others = ", ".join(f"{counts[i]} at {w}x{h} {enc}" for i, (w, h, enc, _) in enumerate(layouts) if i != best)
        left = len(kinds) - int(counts[best])
        w, h, enc, _ = self.layout
        self.warnings.append(f"{self.topic}: {left} frame(s) of another size or encoding than the topic's other "
                             f"{counts[best]} ({w}x{h} {enc}) left out ({others})")
        self.losses.append(Loss(self.topic, f"frames of another size or encoding than {w}x{h} {enc}", left))
        return np.flatnonzero(kinds == best).tolist()

    def _content(self, positions: np.ndarray) -> Callable[[int], Hashable]:
        """Frame i's digest, to tell a repeated frame from another one at the same time.

        Only frames sharing a timestamp are ever asked for; they are re-read from the source together on the
        first request, so the index pass never hashes pixels. A frame that cannot be re-read counts as unique."""
        digests: dict[int, Hashable] = {}

        def content(i: int) -> Hashable:
            if not digests:
                digests.update(self._shared_digests(positions))
            return digests[i]

        return content

    def _shared_digests(self, positions: np.ndarray) -> dict[int, Hashable]:
        assert self._times is not None and self.source is not None  # resolved by `ordered`; set by the Collector
        _, inverse, counts = np.unique(self._times, return_inverse=True, return_counts=True)
        shared = [int(i) for i in np.flatnonzero(counts[inverse] > 1)]
        digests: dict[int, Hashable] = {i: ("unread", i) for i in shared}
        done = 0
        try:
            for i, frame in zip(shared, self.source.iter_frames([int(positions[i]) for i in shared]), strict=False):
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
        self.children: dict[str, Poses] = {}
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
            series = self.children.setdefault(child, Poses(parent))
            if series.parent != parent:
                self.reparented += 1
                continue
            series.add(self.clock.add(stamp, log_time), vec3(t), quat(q))

    def build(self) -> list[Stream]:
        if self.reparented:
            self.warnings.append(f"{self.topic}: dropped {self.reparented} transforms that changed a frame's parent")
        return [s.stream(self, f"tf/{child}", child, self.static) for child, s in self.children.items()]



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


_LOG_LEVELS = {  # ROS 2 rcl_interfaces (10…50) and ROS 1 rosgraph_msgs (bit flags 1…16)
    "rcl_interfaces/msg/Log": {10: "DEBUG", 20: "INFO", 30: "WARN", 40: "ERROR", 50: "FATAL"},
    "rosgraph_msgs/msg/Log": {1: "DEBUG", 2: "INFO", 4: "WARN", 8: "ERROR", 16: "FATAL"},
}


class RosLogBuilder(EventBuilder):
    """`rosout/events` from ROS log messages: one `[LEVEL] node: message` line each, at the message's stamp."""

    def add(self, msg: Any, log_time: int, position: int) -> None:
        level = int(getattr(msg, "level", 0))
        self.values.append(f"[{_LOG_LEVELS[self.msgtype].get(level, str(level))}] {msg.name}: {msg.msg}")
        self.clock.add(header_stamp(msg) or time_ns(getattr(msg, "stamp", None)), log_time)


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
    "foxglove.CompressedVideo": ImageBuilder,
    FFMPEG_PACKET: ImageBuilder,
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
    "rcl_interfaces/msg/Log": RosLogBuilder,
    "rosgraph_msgs/msg/Log": RosLogBuilder,
    "vision_msgs/msg/Detection2DArray": DetectionBuilder,
    "foxglove.ImageAnnotations": DetectionBuilder,
}

