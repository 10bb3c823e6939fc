"""Checks written MCAPs with the real decoders (mcap_protobuf, mcap_ros2) and, for ros2 files, rosbags.

Finished and indexed with clean CRCs; every message decodes; log times never go back; publish time and
stamps equal log time; counts match `robokit.counts`; one TF tree whose image frames are all calibrated.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from mcap.reader import NonSeekingReader, make_reader
from mcap_protobuf.decoder import DecoderFactory as ProtobufDecoders
from mcap_ros2.decoder import DecoderFactory as Ros2Decoders

from robokit.ros.fields import frame_id, header_stamp, normalize_type, time_ns
from robokit.ros.video import FOXGLOVE_FORMATS
from robokit.sources.sniff import MCAP_MAGIC

ENCODING_PAIRS = {("protobuf", "protobuf"), ("cdr", "ros2msg"), ("cdr", "ros2idl")}
TRANSFORMS = ("foxglove.FrameTransforms", "tf2_msgs/msg/TFMessage")
COMPRESSED = ("foxglove.CompressedImage", "sensor_msgs/msg/CompressedImage")
RAW = ("foxglove.RawImage", "sensor_msgs/msg/Image")
VIDEO = ("foxglove.CompressedVideo", "foxglove_msgs/msg/CompressedVideo")
CALIBRATIONS = ("foxglove.CameraCalibration", "sensor_msgs/msg/CameraInfo")
POSES = ("foxglove.PosesInFrame", "foxglove.PoseInFrame", "nav_msgs/msg/Path")
IMAGE_FORMATS = ("jpeg", "png", "webp", "avif")
QUAT_TOLERANCE = 1e-3
MAX_EXAMPLES = 3


@dataclass
class _Findings:
    """What one decoding pass collected."""

    problems: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    parents: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    bad_quats: int = 0
    image_frames: set[str] = field(default_factory=set)
    pose_frames: set[str] = field(default_factory=set)
    calibrated: set[str] = field(default_factory=set)
    clock: Counter[str] = field(default_factory=Counter)  # topic → messages whose stamp differs from log time

    def add(self, problem: str) -> None:
        if sum(1 for p in self.problems if p.split(":")[0] == problem.split(":")[0]) < MAX_EXAMPLES:
            self.problems.append(problem)


def _structure(path: Path) -> tuple[list[str], Any]:
    """Finished, indexed and CRC-clean; returns (problems, summary or None)."""
    data_len = path.stat().st_size
    with path.open("rb") as f:
        head = f.read(len(MCAP_MAGIC))
        f.seek(max(0, data_len - len(MCAP_MAGIC)))
        tail = f.read()
        if head != MCAP_MAGIC or tail != MCAP_MAGIC:
            return ["not a finished MCAP (magic missing at the start or the end)"], None
        f.seek(0)
        summary = make_reader(f, validate_crcs=True).get_summary()
        problems: list[str] = []
        if summary is None or summary.statistics is None:
            return ["no summary with statistics"], None
        if summary.statistics.message_count and not summary.chunk_indexes:
            problems.append("no chunk index")
        if not summary.schemas or not summary.channels:
            problems.append("summary repeats no schemas or channels")
        f.seek(0)
        linear = sum(1 for _ in NonSeekingReader(f, validate_crcs=True).iter_messages())
        if linear != summary.statistics.message_count:
            problems.append(f"{linear} messages in the data, statistics say {summary.statistics.message_count}")
    return problems, summary


def _transforms(msg: Any, schema: str) -> list[tuple[str, str, int, Any]]:
    """(parent, child, stamp, rotation) of every transform in a FrameTransforms / TFMessage."""
    if schema == "foxglove.FrameTransforms":
        return [(t.parent_frame_id, t.child_frame_id, time_ns(t.timestamp), t.rotation) for t in msg.transforms]
    return [(t.header.frame_id, t.child_frame_id, time_ns(t.header.stamp), t.transform.rotation)
            for t in msg.transforms]


def _stamp(msg: Any, schema: str) -> int | None:
    """The message's own time, or None when it has none (std_msgs String, events)."""
    if schema == "foxglove.Event":
        return time_ns(msg.start_time)
    if schema == "rcl_interfaces/msg/Log":
        return time_ns(msg.stamp)
    if hasattr(msg, "header") or hasattr(msg, "timestamp"):
        return header_stamp(msg)
    return None


def _message(out: _Findings, topic: str, schema: str, msg: Any, log_time: int) -> None:
    stamp = _stamp(msg, schema)
    if stamp is not None and stamp != log_time:
        out.clock[topic] += 1
    if schema in TRANSFORMS:
        for parent, child, t, q in _transforms(msg, schema):
            out.parents[str(child)].add(str(parent))
            if t != log_time:
                out.clock[topic] += 1
            if abs(float(np.linalg.norm([q.x, q.y, q.z, q.w])) - 1) > QUAT_TOLERANCE:
                out.bad_quats += 1
    elif schema in COMPRESSED:
        out.image_frames.add(frame_id(msg))
        if msg.format not in IMAGE_FORMATS:
            out.add(f"{topic}: image format {msg.format!r} is not one of {', '.join(IMAGE_FORMATS)}")
    elif schema in VIDEO:
        out.image_frames.add(frame_id(msg))
        if msg.format not in FOXGLOVE_FORMATS.values():
            out.add(f"{topic}: video format {msg.format!r} is not one of {', '.join(FOXGLOVE_FORMATS.values())}")
    elif schema in RAW:
        out.image_frames.add(frame_id(msg))
        if len(msg.data) != msg.step * msg.height:
            out.add(f"{topic}: raw image of {len(msg.data)} bytes for step {msg.step} × height {msg.height}")
    elif schema in CALIBRATIONS:
        k = list(getattr(msg, "K", None) or getattr(msg, "k", []))
        if len(k) == 9 and k[0] != 0:
            out.calibrated.add(frame_id(msg))
    elif schema in POSES:
        out.pose_frames.add(frame_id(msg))


def _decode(path: Path, summary: Any) -> _Findings:
    out = _Findings()
    for ch in summary.channels.values():
        schema = summary.schemas.get(ch.schema_id)
        if schema is None:
            out.add(f"{ch.topic}: channel has no schema")
        elif (ch.message_encoding, schema.encoding) not in ENCODING_PAIRS:
            out.add(f"{ch.topic}: encoding {ch.message_encoding!r} with a {schema.encoding!r} schema")
        elif not (schema.name.startswith("foxglove.") or "/msg/" in schema.name):
            out.add(f"{ch.topic}: schema {schema.name!r} is not a Foxglove or ROS message type")
        if not ch.topic.startswith("/"):
            out.add(f"{ch.topic}: topic does not start with '/'")
    last: dict[str, int] = {}
    previous = -1
    with path.open("rb") as f:
        reader = make_reader(f, decoder_factories=[ProtobufDecoders(), Ros2Decoders()])
        try:
            for schema, channel, message, msg in reader.iter_decoded_messages(log_time_order=False):
                topic, t = channel.topic, message.log_time
                out.counts[topic] += 1
                if t < last.get(topic, -1):
                    out.add(f"{topic}: log time goes back at message {out.counts[topic]}")
                if t < previous:
                    out.add(f"file order: {topic} message at {t} after one at {previous}")
                last[topic], previous = t, max(previous, t)
                if message.publish_time != t:
                    out.clock[topic] += 1
                _message(out, topic, normalize_type(schema.name) if schema else "", msg, t)
        except Exception as err:  # the decoder's own failure is the finding
            out.add(f"decoding: {type(err).__name__}: {err}")
        expected = next((m.metadata for m in reader.iter_metadata() if m.name == "robokit.counts"), None)
    if expected is None:
        out.add("no robokit.counts metadata record")
    else:
        for topic, wanted in expected.items():
            if int(wanted) != out.counts[topic]:
                out.add(f"{topic}: {out.counts[topic]} messages, robokit.counts says {wanted}")
    for topic, n in out.clock.items():
        out.add(f"{topic}: {n} message(s) whose publish time or stamp differs from the log time")
    return out


def _tree(out: _Findings) -> list[str]:
    """One parent per frame, no leading '/', one root, no cycle, unit quaternions, visual frames reachable."""
    problems = [f"frame {c!r} has {len(p)} parents: {sorted(p)}" for c, p in sorted(out.parents.items()) if len(p) > 1]
    frames = set(out.parents) | {p for ps in out.parents.values() for p in ps}
    problems += [f"frame id {f!r} starts with '/'" for f in sorted(frames) if f.startswith("/")]
    if out.bad_quats:
        problems.append(f"{out.bad_quats} transform(s) with a quaternion of norm ≠ 1")
    parent = {c: sorted(p)[0] for c, p in out.parents.items()}
    for child in sorted(parent):
        seen = {child}
        frame = child
        while frame in parent:
            frame = parent[frame]
            if frame in seen:
                problems.append(f"cycle through frame {child!r}")
                break
            seen.add(frame)
    roots = sorted(frames - set(parent))
    if len(roots) != 1 and frames:
        problems.append(f"TF tree has {len(roots)} roots: {roots}")
    problems += [f"frame {f!r} used by an image or poses is not in the TF tree"
                 for f in sorted((out.image_frames | out.pose_frames) - frames)]
    problems += [f"image frame {f!r} has no calibration with a non-zero K" for f in sorted(out.image_frames)
                 if f not in out.calibrated]
    return problems


def _rosbags(path: Path) -> list[str]:
    """ros2 files open in rosbags' AnyReader and every message deserializes."""
    from rosbags.highlevel import AnyReader

    try:
        with AnyReader([path]) as reader:
            n = 0
            for conn, _, raw in reader.messages():
                reader.deserialize(raw, conn.msgtype)
                n += 1
            if n != reader.message_count:
                return [f"rosbags read {n} of {reader.message_count} messages"]
    except Exception as err:  # the consumer's own failure is the finding
        return [f"rosbags AnyReader: {type(err).__name__}: {err}"]
    return []


def check_file(path: Path) -> list[str]:
    """Problems found in one MCAP (empty: it passed)."""
    problems, summary = _structure(path)
    if summary is None:
        return problems
    found = _decode(path, summary)
    problems += found.problems + _tree(found)
    with path.open("rb") as f:
        profile = make_reader(f).get_header().profile
    if profile == "ros2":
        problems += _rosbags(path)
    return problems


def check_folder(format_dir: Path) -> list[str]:
    """Problems of every `*.mcap` in `format_dir`, each prefixed with its file name."""
    files = sorted(format_dir.glob("*.mcap"))
    if not files:
        return [f"{format_dir}: no .mcap files"]
    return [f"{p.name}: {problem}" for p in files for problem in check_file(p)]
