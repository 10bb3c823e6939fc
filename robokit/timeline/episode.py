"""An episode: named streams plus the metadata that traces every sample back to its recording."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np

import robokit.errors
from robokit.errors import ChannelError
from robokit.timeline.derived import derive
from robokit.timeline.losses import Loss, non_finite_warnings
from robokit.timeline.points import PointStream, describe
from robokit.timeline.streams import EventStream, ImageStream, PoseStream, Stream

TASK_CHANNEL = "task"


@dataclass(frozen=True)
class EpisodeMeta:
    """Traceability and description: source URI, segment (start/end ns in the source), source digest, ..."""

    source_uri: str
    episode_id: str
    source_version: str = ""
    segment: tuple[int, int] | None = None
    source_format: str = ""
    tasks: tuple[str, ...] = ()
    robot_type: str = ""
    tags: Mapping[str, str] = field(default_factory=dict)

    def trace(self) -> dict[str, Any]:
        """The traceability fields every writer stores with each episode."""
        seg = list(self.segment) if self.segment else None
        return {"source": self.source_uri, "segment": seg, "segment_version": self.source_version}


@dataclass(frozen=True)
class SkippedTopic:
    """A topic the reader could not map, with the reason and how many messages it held."""

    topic: str
    msgtype: str
    reason: str
    count: int


@dataclass(frozen=True)
class StreamInfo:
    """One row of `robokit info`."""

    channel: str
    kind: str
    topic: str
    msgtype: str
    count: int
    rate_hz: float
    start_ns: int
    duration_s: float
    time_source: str
    detail: str = ""  # kind-specific facts (point clouds: fields and points per sample)

    @property
    def start_utc(self) -> str:
        return format_utc(self.start_ns)


def format_utc(ns: int) -> str:
    """ISO-8601 UTC with milliseconds."""
    return datetime.fromtimestamp(ns / 1e9, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@dataclass(frozen=True)
class EpisodeInfo:
    """What `Episode.info()` and `robokit info` report about one episode."""

    source: str
    episode_id: str
    source_format: str
    start_ns: int
    duration_s: float
    streams: tuple[StreamInfo, ...]
    skipped: tuple[SkippedTopic, ...]
    warnings: tuple[str, ...]
    tasks: tuple[str, ...]
    losses: tuple[Loss, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["start_utc"] = format_utc(self.start_ns) if self.streams else None
        for row, info in zip(d["streams"], self.streams, strict=True):
            row["start_utc"] = info.start_utc
        return d


def _rate(stream: Stream) -> float:
    span = (stream.end_ns - stream.start_ns) / 1e9
    return (len(stream) - 1) / span if len(stream) > 1 and span > 0 else 0.0


Loaded = tuple[dict[str, Stream], list[SkippedTopic], list[str]]
LoadedWithLosses = tuple[dict[str, Stream], list[SkippedTopic], list[str], list[Loss]]


class Episode:
    """Named streams on one timeline; loaded on first access when built from a reader's loader.

    Streams are keyed by channel name (`joints/position`, `front/rgb`, `tf/<child>`, `task`, ...).
    Media stays lazy: image streams decode frames only when iterated.
    """

    def __init__(
        self,
        meta: EpisodeMeta,
        streams: Mapping[str, Stream] | None = None,
        *,
        loader: Callable[[], Loaded | LoadedWithLosses] | None = None,
        skipped: list[SkippedTopic] | None = None,
        warnings: list[str] | None = None,
        losses: list[Loss] | None = None,
    ) -> None:
        self.meta = meta
        self._loader = loader and robokit.errors.guarded(loader, meta.source_uri or meta.episode_id)
        self._streams: dict[str, Stream] | None = dict(streams) if streams is not None else None
        self._skipped = list(skipped or [])
        self._warnings = list(warnings or [])
        self._losses = list(losses or [])
        if self._streams is None and loader is None:
            self._streams = {}

    def _load(self) -> dict[str, Stream]:
        if self._streams is None:
            assert self._loader is not None
            loaded = self._loader()
            streams = loaded[0]
            self._streams = streams
            self._skipped.extend(loaded[1])
            self._warnings.extend(loaded[2])
            self._warnings.extend(non_finite_warnings(streams))
            for losses in loaded[3:]:
                self._losses.extend(losses)
        return self._streams

    @property
    def streams(self) -> dict[str, Stream]:
        return self._load()

    @property
    def skipped(self) -> list[SkippedTopic]:
        self._load()
        return self._skipped

    @property
    def warnings(self) -> list[str]:
        self._load()
        return self._warnings

    @property
    def losses(self) -> list[Loss]:
        """Messages the recording holds but the episode lacks (truncation, damage, decode failures)."""
        self._load()
        return self._losses

    @property
    def complete(self) -> bool:
        """True when the reader delivered everything it was asked for (no losses)."""
        return not self.losses

    @property
    def id(self) -> str:
        return self.meta.episode_id

    def __contains__(self, name: object) -> bool:
        return name in self.streams

    def __iter__(self) -> Iterator[str]:
        return iter(self.streams)

    def __getitem__(self, name: str) -> Stream:
        """The stream `name`; derived channels (`<channel>_delta`, `<channel>_velocity`) on demand."""
        streams = self.streams
        if name in streams:
            return streams[name]
        derived = derive(self, name)
        if derived is None:
            raise ChannelError(name, list(streams))
        return derived

    @property
    def cameras(self) -> dict[str, ImageStream]:
        return {k: s for k, s in self.streams.items() if isinstance(s, ImageStream)}

    @property
    def poses(self) -> dict[str, PoseStream]:
        return {k: s for k, s in self.streams.items() if isinstance(s, PoseStream)}

    @property
    def tasks(self) -> tuple[str, ...]:
        """Task / language instructions: the metadata's, else the distinct values of the `task` channel."""
        if self.meta.tasks:
            return self.meta.tasks
        stream = self.streams.get(TASK_CHANNEL)
        if isinstance(stream, EventStream):
            return tuple(dict.fromkeys(v for v in stream.values if v))
        return ()

    @property
    def start_ns(self) -> int:
        timed = [s for s in self.streams.values() if len(s) and not getattr(s, "static", False)]
        return min((s.start_ns for s in timed), default=0)

    @property
    def end_ns(self) -> int:
        timed = [s for s in self.streams.values() if len(s) and not getattr(s, "static", False)]
        return max((s.end_ns for s in timed), default=0)

    @property
    def duration_s(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e9

    def with_streams(self, streams: Mapping[str, Stream], **meta_changes: Any) -> Episode:
        """A loaded copy with other streams (and optionally changed metadata), keeping skips and warnings."""
        meta = replace(self.meta, **meta_changes) if meta_changes else self.meta
        return Episode(meta, streams, skipped=self.skipped, warnings=self.warnings, losses=self.losses)

    def crop(self, start_ns: int, end_ns: int) -> Episode:
        """The part of the episode in [start_ns, end_ns] (static streams and events before the start kept).

        Events before the start stay because they are still in effect (a task given earlier).
        """
        streams: dict[str, Stream] = {}
        for name, s in self.streams.items():
            if getattr(s, "static", False):
                streams[name] = s
                continue
            keep = s.timestamps <= end_ns
            if not isinstance(s, EventStream):
                keep &= s.timestamps >= start_ns
            streams[name] = s.take(np.flatnonzero(keep))
        return self.with_streams(streams, segment=(int(start_ns), int(end_ns)))

    def select(self, names: list[str]) -> Episode:
        """Only the channels `names` (derived ones computed); unknown names raise ChannelError."""
        return self.with_streams({n: self[n] for n in names})

    def info(self) -> EpisodeInfo:
        rows = []
        for name, s in sorted(self.streams.items()):
            origin = s.origin
            rows.append(
                StreamInfo(
                    channel=name,
                    kind=s.kind,
                    topic=origin.topic if origin else "",
                    msgtype=origin.msgtype if origin else "",
                    count=len(s),
                    rate_hz=_rate(s),
                    start_ns=s.start_ns,
                    duration_s=(s.end_ns - s.start_ns) / 1e9,
                    time_source=origin.time_source if origin else "",
                    detail=describe(s) if isinstance(s, PointStream) else "",
                )
            )
        return EpisodeInfo(
            source=self.meta.source_uri,
            episode_id=self.meta.episode_id,
            source_format=self.meta.source_format,
            start_ns=self.start_ns,
            duration_s=self.duration_s,
            streams=tuple(rows),
            skipped=tuple(self.skipped),
            warnings=tuple(self.warnings),
            tasks=self.tasks,
            losses=tuple(self.losses),
        )

    def __repr__(self) -> str:
        state = f"{len(self._streams)} streams" if self._streams is not None else "not loaded"
        return f"Episode({self.meta.episode_id!r}, {self.meta.source_uri!r}, {state})"
