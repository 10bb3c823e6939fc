"""Topics for an episode's own streams: joint states, other numeric series, cameras, events and the TF tree.

Topic names follow the reader's naming (`/joint_states` → `joints/*`, `/camera/front/image` → `front/rgb`),
and every topic's metadata lists the timeline channels it carries, so reading the file back gives the
same channel names even where a topic name cannot say it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import replace
from itertools import pairwise

import numpy as np

from robokit.converters.mcap.encoding import Encoder, Floats, Kind
from robokit.converters.mcap.images import is_raw, payloads
from robokit.converters.mcap.tftree import Edge, Note, Tree, slug
from robokit.converters.mcap.topic import Messages, Topic, TopicNames, carries, derived
from robokit.converters.videocopy import copyable
from robokit.ros.video import FOXGLOVE_FORMATS
from robokit.sources.naming import event_channel, image_channel, joints_group
from robokit.timeline import CameraInfo, EventStream, ImageStream, NumericStream
from robokit.timeline.streams import ints
from robokit.timeline.video import CodedVideo

JOINT_FIELDS = ("position", "velocity", "effort")
NOMINAL_FOV_DEG = 60.0


def joint_messages(enc: Encoder, timestamps: np.ndarray, names: Sequence[str], fields: Mapping[str, Floats]
                   ) -> Messages:
    """JointStates messages, one per timestamp, with the given fields (position / velocity / effort)."""

    def messages() -> Iterator[tuple[int, bytes]]:
        for i, t in enumerate(ints(timestamps)):
            rows = [fields[f][i] if f in fields else None for f in JOINT_FIELDS]
            yield t, enc.joint_states(t, names, rows[0], rows[1], rows[2])

    return messages


def joints_topic(group: str) -> str:
    """The topic whose default channels are `<group>/position|velocity|effort`."""
    if group == "joints":
        return "/joint_states"
    if group.endswith("_joints"):
        return f"/{group.removesuffix('_joints')}/joint_states"
    return f"/{group}"


def numeric_topics(streams: Mapping[str, NumericStream], enc: Encoder, names: TopicNames) -> list[Topic]:
    """One JointStates topic per group whose position/velocity/effort share times and names; one per other stream."""
    groups: dict[str, dict[str, NumericStream]] = {}
    for name in sorted(streams):
        group, _, field = name.partition("/")
        groups.setdefault(group, {})[field] = streams[name]
    topics: list[Topic] = []
    loose: list[NumericStream] = []
    for group, fields in groups.items():
        joint = {f: s for f, s in fields.items() if f in JOINT_FIELDS}
        ref = next(iter(joint.values()), None)
        together = {f: s for f, s in joint.items() if ref is not None and s.names == ref.names
                    and np.array_equal(s.timestamps, ref.timestamps)}
        loose += [s for f, s in fields.items() if f not in together]
        if ref is None or not together:
            continue
        topic = names.take(joints_topic(group))
        default = joints_group(topic)
        carried = {f"{default}/{f}": s.name for f, s in together.items()}
        values = {f: s.values for f, s in together.items()}
        topics.append(Topic(topic, "joint_states", len(ref), joint_messages(enc, ref.timestamps, ref.names, values),
                            carries(carried)))
    for s in loose:
        topic = names.take(f"/{s.name}")
        topics.append(Topic(topic, "joint_states", len(s), joint_messages(enc, s.timestamps, s.names,
                                                                          {"position": s.values}),
                            carries({f"{joints_group(topic)}/position": s.name})))
    return topics


def camera_frame(name: str, stream: ImageStream) -> str:
    """The optical frame an image is in: its own frame_id, its calibration's, else `<camera>_optical`."""
    return stream.frame_id or (stream.camera.frame_id if stream.camera else "") or f"{slug(name.split('/')[0])}_optical"


def nominal_camera(stream: ImageStream) -> CameraInfo:
    """Pinhole intrinsics with a 60° vertical field of view, for cameras recorded without any."""
    info = CameraInfo.from_fov(stream.width, stream.height, NOMINAL_FOV_DEG)
    return replace(info, distortion=np.zeros(5), distortion_model="plumb_bob")


def image_topics(cameras: Mapping[str, ImageStream], enc: Encoder, names: TopicNames, pool: Executor, prefer: str,
                 notes: list[Note]) -> list[Topic]:
    """`/camera/<name>/image` and `/camera/<name>/calibration` (one calibration per frame, same frame_id)."""
    topics: list[Topic] = []
    for name in sorted(cameras):
        s = cameras[name]
        group, _, field = name.partition("/")
        base = f"/camera/{group}" + ("" if field in ("rgb", "") else f"/{field}")
        frame_id = camera_frame(name, s)
        topic = names.take(f"{base}/image")
        kind: Kind = "raw_image" if is_raw(s) else "compressed_image"
        video, why = copyable(s, tuple(FOXGLOVE_FORMATS))
        messages = _image_messages(enc, s, frame_id, prefer, pool)
        if video is not None:
            kind, messages = "compressed_video", _video_messages(enc, s, frame_id, video)
            notes.append(("info", f"{name}: {video.codec} packets passed through as foxglove.CompressedVideo"))
        elif s.format in ("jpeg", "png"):
            notes.append(("info", f"{name}: {s.format.upper()} frames passed through"))
        else:
            how = "written raw" if is_raw(s) else f"encoded once as {prefer} (PNG where JPEG cannot hold them)"
            notes.append(("warning" if why else "info", f"{name}: {s.width}x{s.height} {s.encoding} frames {how}"
                          + (f"; coded video not passed through: {why}" if why else "")))
        topics.append(Topic(topic, kind, len(s), messages, carries({image_channel(topic, s.is_depth): name})))
        meta: dict[str, str] = {}
        camera = s.camera
        if camera is None:
            camera = nominal_camera(s)
            meta = derived("nominal intrinsics: the recording has no calibration for this camera")
            notes.append(("warning", f"{name}: no intrinsics; nominal {NOMINAL_FOV_DEG:g}° calibration written"))
        topics.append(Topic(names.take(f"{base}/calibration"), "calibration", len(s),
                            _calibration_messages(enc, s.timestamps, frame_id, camera), meta))
    return topics


def _image_messages(enc: Encoder, s: ImageStream, frame_id: str, prefer: str, pool: Executor) -> Messages:
    def messages() -> Iterator[tuple[int, bytes]]:
        for t, (fmt, data) in zip(ints(s.timestamps), payloads(s, prefer, pool), strict=True):
            if isinstance(data, np.ndarray):
                yield t, enc.raw_image(t, frame_id, data, s.encoding)
            else:
                yield t, enc.compressed_image(t, frame_id, fmt, data)

    return messages


def _video_messages(enc: Encoder, s: ImageStream, frame_id: str, video: CodedVideo) -> Messages:
    """One CompressedVideo message per recorded packet, bytes as recorded (keyframes carry their parameter sets)."""
    fmt = FOXGLOVE_FORMATS[video.codec]

    def messages() -> Iterator[tuple[int, bytes]]:
        for t, packet in zip(ints(s.timestamps), video.packets(s.positions.tolist()), strict=True):
            yield t, enc.compressed_video(t, frame_id, fmt, packet.data)

    return messages


def _calibration_messages(enc: Encoder, timestamps: np.ndarray, frame_id: str, camera: CameraInfo) -> Messages:
    def messages() -> Iterator[tuple[int, bytes]]:
        for t in ints(timestamps):
            yield t, enc.calibration(t, frame_id, camera)

    return messages


def event_topics(events: Mapping[str, EventStream], enc: Encoder, names: TopicNames, notes: list[Note]
                 ) -> list[Topic]:
    """`/task` for the task channel, `/<name>` for `<name>/events`, `/<channel>` otherwise."""
    topics: list[Topic] = []
    for name in sorted(events):
        s = events[name]
        group, _, field = name.partition("/")
        topic = names.take("/task" if name == "task" else f"/{group}" if field == "events" else f"/{name}")
        shared = len(s) - len(np.unique(s.timestamps))
        if shared:
            notes.append(("warning", f"{name}: {shared} event(s) share a timestamp with another"))

        def messages(s: EventStream = s, name: str = name) -> Iterator[tuple[int, bytes]]:
            for t, value in zip(ints(s.timestamps), s.values, strict=True):
                yield t, enc.text(t, name, value)

        topics.append(Topic(topic, "text", len(s), messages, carries({event_channel(topic): name})))
    return topics


def transform_messages(enc: Encoder, edges: Sequence[Edge]) -> tuple[int, Messages]:
    """(message count, messages): one FrameTransforms per distinct time holding every edge sampled then."""
    times = np.concatenate([e.timestamps for e in edges])
    which = np.repeat(np.arange(len(edges)), [len(e.timestamps) for e in edges])
    translation = np.vstack([e.translation for e in edges])
    quaternion = np.vstack([e.quaternion for e in edges])
    order = np.argsort(times, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(times[order]) != 0])
    bounds = np.r_[starts, len(order)].tolist()

    def messages() -> Iterator[tuple[int, bytes]]:
        for a, b in pairwise(bounds):
            rows = order[a:b]
            group = [edges[i] for i in which[rows].tolist()]
            yield int(times[rows[0]]), enc.transforms(int(times[rows[0]]), [e.parent for e in group],
                                                      [e.child for e in group], translation[rows], quaternion[rows])

    return len(starts), messages


def tf_topics(tree: Tree, enc: Encoder, names: TopicNames) -> list[Topic]:
    """`/tf` (moving edges), `/tf_static` (static ones) and `/robokit/tf_static` (identity fills, derived)."""
    topics: list[Topic] = []
    for topic, edges in (("/tf_static", [e for e in tree.edges if e.static]),
                         ("/tf", [e for e in tree.edges if not e.static])):
        if edges:
            count, messages = transform_messages(enc, edges)
            topics.append(Topic(names.take(topic), "transforms", count, messages,
                                carries({f"tf/{e.child}": e.channel for e in edges})))
    if tree.fills:
        count, messages = transform_messages(enc, tree.fills)
        topics.append(Topic(names.take("/robokit/tf_static"), "transforms", count, messages,
                            derived("identity links that make every frame reachable from the root")))
    return topics
