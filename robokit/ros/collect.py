"""The index pass shared by all containers: per-topic counts, builders, skipped topics, names, intrinsics."""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from robokit import heap
from robokit.ros.builders import builder_for
from robokit.ros.fields import UnsupportedMessage, normalize_type
from robokit.ros.generic import GenericBuilder
from robokit.ros.heads import HEAD_BYTES
from robokit.ros.messages import CameraInfoBuilder, ImageBuilder
from robokit.ros.pixels import image_frame
from robokit.ros.points import PointsBuilder, cloud_of
from robokit.ros.topic_builder import TopicBuilder
from robokit.sources import naming
from robokit.sources.framesource import TopicClouds, TopicFrames
from robokit.timeline import CameraInfo, ImageStream, Loss, SkippedTopic, Stream
from robokit.timeline.episode import LoadedWithLosses

GROUP_NOTES = 5  # topics sharing a warning word for word, from which it is one line

Decode = Callable[[Any], Any]
Scan = Callable[[int | None], Generator[Any, None, None]]  # a topic's raw items from a log time on
TopicReader = Callable[[str], tuple[Scan, Decode]]  # topic → (its scan, raw item → message object)
Loaded = LoadedWithLosses


@dataclass
class _Topic:
    topic: str
    msgtype: str
    builder: TopicBuilder
    reason: str = ""  # set when the whole topic is skipped
    count: int = 0
    failed: int = 0
    error: str = ""
    log_times: heap.Ints | None = None  # per message, for topics whose frames are re-read later
    other_types: set[str] = field(default_factory=set)


class Collector:
    """Takes a recording's topics and messages in order and assembles the episode's streams.

    Every topic is accounted for: streams, a SkippedTopic (reason, messages), or both when some failed."""

    def __init__(self, mapping: Mapping[str, str], frames: TopicReader, label: str) -> None:
        self.mapping = mapping
        self.frames = frames
        self.label = label
        self.topics: dict[str, _Topic] = {}
        self.warnings: list[str] = []
        self.losses: list[Loss] = []
        self.deliberate: set[str] = set()  # topics skipped on purpose (not losses)
        self.renames: dict[str, dict[str, str]] = {}  # topic → {default channel name: channel name}

    def declare(self, topic: str, msgtype: str) -> bool:
        """Register a topic's channel/connection; True when its messages are to be decoded."""
        msgtype = normalize_type(msgtype)
        known = self.topics.get(topic)
        if known is None:
            builder = builder_for(topic, msgtype)
            known = self.topics[topic] = _Topic(topic, msgtype, builder)
            if builder.lazy_frames:
                known.log_times = heap.Ints()
        elif known.msgtype != msgtype:
            known.other_types.add(msgtype)
            return False
        return not known.reason

    def wanted(self) -> list[str]:
        """Topics whose messages must be read (the others are counted from the recording's index)."""
        return [t.topic for t in self.topics.values() if not t.reason]

    def reject(self, topic: str, reason: str, deliberate: bool = False) -> None:
        """Skip a whole topic, e.g. when its schema does not parse (a loss unless `deliberate`, or a type without
        a builder: such topics were never read before robokit flattened them)."""
        self.topics[topic].reason = reason
        if deliberate or isinstance(self.topics[topic].builder, GenericBuilder):
            self.deliberate.add(topic)

    def rename(self, topic: str, names: Mapping[str, str]) -> None:
        """Channel names the recording itself gives a topic's streams (a user mapping still wins)."""
        self.renames.setdefault(topic, {}).update(names)

    def add_count(self, topic: str, count: int) -> None:
        """Messages of a topic that was not read (counts from the index or statistics)."""
        self.topics[topic].count += count

    def head_bytes(self, topic: str | None) -> int:
        """Bytes a reader walking chunks may read of the topic's next message (0: all of it): `HEAD_BYTES` when its
        builder needs only headers (the payload is re-read later); None is a topic without a header parser."""
        t = self.topics.get(topic) if topic is not None else None
        return HEAD_BYTES if t is not None and not t.reason and t.builder.headers_suffice() else 0

    def feed(self, topic: str, log_time: int, raw: Any, decode: Decode | None) -> None:
        """One message in the recording's order; `decode` None means count it only."""
        t = self.topics[topic]
        if t.log_times is not None:
            t.log_times.append(log_time)  # first: a time past int64 (damaged data) raises before the count moves
        position = t.count
        t.count += 1
        if decode is None or t.reason:
            return
        try:
            t.builder.add(decode(raw), log_time, position)
        except UnsupportedMessage as err:
            t.reason = str(err)
        except Exception as err:  # a bad message must not sink the recording; counted and reported
            t.failed += 1
            t.error = t.error or f"{type(err).__name__}: {err}"

    def stopped(self, where: str, err: Exception) -> None:
        """The recording's data ended or broke mid-way: keep what was read, say where it stopped."""
        read = sum(t.count for t in self.topics.values())
        self.lose("", f"{where}: reading stopped at damaged data after {read} messages ({type(err).__name__}: {err})")

    def lose(self, topic: str, reason: str, messages: int | None = None) -> None:
        """Record messages the recording holds that will not reach the episode (also as a warning)."""
        self.losses.append(Loss(topic, reason, messages))
        self.warnings.append(f"{topic + ': ' if topic else ''}{reason}")

    def counts(self) -> dict[str, int]:
        """Messages seen so far per topic (read, or counted from the index for topics not read)."""
        return {t.topic: t.count for t in self.topics.values()}

    def expect(self, expected: Mapping[str, int], read: Mapping[str, int], source: str) -> None:
        """Compare what was read per topic with the container's own counts; a shortfall is a loss."""
        for topic, count in expected.items():
            got = read.get(topic, 0)
            if got < count:
                self.lose(topic, f"read {got} of the {count} messages {source} counts", count - got)

    def finish(self) -> Loaded:
        """The streams by channel name, the skipped topics, the warnings and the losses."""
        streams: dict[str, Stream] = {}
        skipped: list[SkippedTopic] = []
        cameras: list[tuple[_Topic, CameraInfoBuilder]] = []
        camera_keys: dict[str, str] = {}

        def skip(t: _Topic, reason: str, count: int) -> None:
            skipped.append(SkippedTopic(t.topic, t.msgtype, reason, count))
            self.warnings.append(f"skipped {t.topic} ({t.msgtype}): {reason} [{count} messages]")

        for t in self.topics.values():
            if t.other_types:
                self.warnings.append(f"{t.topic}: also has types {sorted(t.other_types)}; only {t.msgtype} is read")
            b = t.builder
            if t.reason:
                skip(t, t.reason, t.count)
                if t.count and t.topic not in self.deliberate:  # a mapped topic lost whole
                    self.losses.append(Loss(t.topic, t.reason, t.count))
                continue
            if t.failed:
                skip(t, f"{t.failed} of {t.count} messages failed to decode ({t.error})", t.failed)
                self.losses.append(Loss(t.topic, f"undecodable messages ({t.error})", t.failed))
            if isinstance(b, CameraInfoBuilder):
                cameras.append((t, b))
                continue
            if t.log_times is not None:
                self._give_source(t, b, t.log_times)
            built = b.build()
            heap.unmap_resident()  # what building read of mapped arrays: one topic's resident at a time
            self.warnings.extend(b.warnings)
            self.losses.extend(b.losses)
            if not built:
                if t.count > t.failed or not t.count:
                    skip(t, "no messages" if not t.count else "no usable samples", t.count - t.failed)
                continue
            names = [s.name for s in built]
            value = naming.lookup(self.mapping, t.topic)
            if value:
                names = naming.apply_mapping(value, names, b.multi, b.group)
            elif t.topic in self.renames:
                names = [self.renames[t.topic].get(n, n) for n in names]
            for stream, name in zip(built, names, strict=True):
                unique = self._unique(name, streams, t.topic)
                streams[unique] = stream if unique == stream.name else stream.renamed(unique)
                if isinstance(b, ImageBuilder):
                    camera_keys[unique] = b.camera_key
        attached: set[str] = set()
        for by_frame in (True, False):  # an exact frame_id match wins over a camera-name match
            for t, cam in cameras:
                if cam.info is not None and _attach(cam.info, cam.camera_key, streams, camera_keys, by_frame):
                    attached.add(t.topic)
        for t, cam in cameras:
            if t.topic not in attached:
                why = "no calibrated message (K is all zero)" if cam.info is None else "no image stream"
                skip(t, f"{why} for camera {cam.camera_key!r}", t.count - t.failed)
        return streams, skipped, grouped_notes(self.warnings), self.losses

    def _give_source(self, t: _Topic, b: TopicBuilder, log_times: heap.Ints) -> None:
        """Give a lazy builder its frame or cloud source: the topic re-read and decoded on demand."""
        scan, decode = self.frames(t.topic)
        times, label = log_times.array(), f"{self.label} {t.topic}"
        if isinstance(b, ImageBuilder):
            b.source = TopicFrames(scan, partial(_converted, decode, partial(image_frame, msgtype=t.msgtype)),
                                   times, label)
        elif isinstance(b, PointsBuilder) and b.fields is not None:
            b.source = TopicClouds(scan, partial(_converted, decode, partial(cloud_of, msgtype=t.msgtype,
                                                                             fields=b.fields)), times, label)

    def _unique(self, name: str, streams: Mapping[str, Stream], topic: str) -> str:
        if name not in streams:
            return name
        i = 2
        while f"{name}_{i}" in streams:
            i += 1
        self.warnings.append(f"{topic}: channel {name!r} already taken, named {name}_{i}")
        return f"{name}_{i}"


def _converted(decode: Decode, convert: Callable[[Any], Any], item: Any) -> Any:
    return convert(decode(item))


def _attach(info: CameraInfo, key: str, streams: dict[str, Stream], keys: Mapping[str, str], by_frame: bool) -> bool:
    """Put the intrinsics on image streams without any, matched by frame_id or by camera name."""
    found = False
    for name, s in list(streams.items()):
        if not isinstance(s, ImageStream) or s.camera is not None:
            continue
        match = (bool(info.frame_id) and info.frame_id == s.frame_id) if by_frame else keys.get(name) == key
        if match:
            streams[name] = replace(s, camera=_sized(info, s))
            found = True
    return found


def _sized(info: CameraInfo, stream: ImageStream) -> CameraInfo:
    """Calibrations without a size (Foxglove allows 0) take the image's."""
    if info.width and info.height:
        return info
    return replace(info, width=stream.width, height=stream.height)


def grouped_notes(warnings: list[str]) -> list[str]:
    """Warnings `/topic: note` that `GROUP_NOTES` or more topics share word for word as one line naming how many
    and the first three (a RealSense bag's 60 option topics all logged at 1 ns); the others as they were, in order."""
    by_note: dict[str, list[str]] = {}
    for warning in warnings:
        topic, sep, note = warning.partition(": ")
        if sep and topic.startswith("/") and topic not in by_note.setdefault(note, []):
            by_note[note].append(topic)
    out: list[str] = []
    done: set[str] = set()
    for warning in warnings:
        topic, sep, note = warning.partition(": ")
        topics = by_note.get(note, []) if sep and topic.startswith("/") else []
        if len(topics) < GROUP_NOTES:
            out.append(warning)
        elif note not in done:
            done.add(note)
            more = f" and {len(topics) - 3} more" if len(topics) > 3 else ""
            out.append(f"{len(topics)} topics ({', '.join(topics[:3])}{more}): {note}")
    return out
