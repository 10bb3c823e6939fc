"""Put an episode's streams on one fixed-rate grid over their common time range, and report what it cost.

The grid is t0 + round(k·1e9/fps) ns over the overlap [latest start, earliest end] of the selected numeric,
pose and image streams (static poses and events do not limit it); nothing is extrapolated.
Numeric streams and pose translations: nearest or linear; rotations: nearest or slerp; images and point
clouds: nearest, whatever the method (re-indexed, never decoded nor interpolated); events: snapped to the
nearest tick (see `_snap_events`).
Linear interpolation between a NaN and a value gives NaN; a sample hit exactly in time is copied as is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import numpy.typing as npt

from robokit import heap
from robokit.errors import ChannelError, ResampleError
from robokit.frames.quaternion import canonical
from robokit.timeline import Episode, EventStream, NumericStream, PoseStream, Stream
from robokit.timeline.points import NEAREST_ONLY, PointStream

Method = Literal["nearest", "linear"]
METHODS: tuple[Method, ...] = ("nearest", "linear")

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class StreamReport:
    """How one stream was resampled: method used ("nearest", "linear", "kept"), offsets and losses."""

    channel: str
    kind: str
    method: str
    samples_in: int
    samples_out: int
    max_offset_ns: int  # largest |tick − time of the sample used| from nearest picks; 0 for linear
    outside: int  # source samples before the first or after the last tick
    dropped: int  # source samples absent from the output (events after the last tick)
    dropped_start_ns: int  # span of the stream before the first tick
    dropped_end_ns: int  # span of the stream after the last tick


@dataclass(frozen=True)
class ResampleReport:
    """The grid (fps, method, first/last tick, tick count) and one StreamReport per channel."""

    fps: float
    method: Method
    start_ns: int
    end_ns: int
    count: int
    streams: Mapping[str, StreamReport]

    def warnings(self) -> list[str]:
        """Streams that could not take the asked method: point streams under `linear` take the nearest cloud."""
        if self.method != "linear":
            return []
        return [f"{s.channel}: {NEAREST_ONLY}" for s in self.streams.values() if s.kind == PointStream.kind]


class ResampledEpisode(Episode):
    """An Episode on a common grid; `resample_report` records how it was built and what was dropped."""

    def __init__(self, episode: Episode, report: ResampleReport) -> None:
        super().__init__(episode.meta, episode.streams, skipped=episode.skipped, warnings=episode.warnings,
                         losses=episode.losses)
        self.resample_report = report


def resample(
    episode: Episode, fps: float, method: Method = "nearest", channels: Sequence[str] | None = None
) -> ResampledEpisode:
    """The selected channels (default all) of `episode` on a `fps` grid over their overlap, with a report."""
    if method not in METHODS:
        raise ResampleError(f"unknown resampling method {method!r}; expected one of {', '.join(METHODS)}")
    if not (math.isfinite(fps) and fps > 0):
        raise ResampleError(f"fps must be a positive number, got {fps!r}")
    streams = _select(episode, channels)
    grid = _grid(streams, fps)
    out: dict[str, Stream] = {}
    reports: dict[str, StreamReport] = {}
    for name, stream in streams.items():
        out[name], reports[name] = _resample_stream(name, stream, grid, method)
        heap.unmap_resident()  # what it read of mapped arrays: resident one stream at a time, not the episode's
    report = ResampleReport(fps, method, int(grid[0]), int(grid[-1]), len(grid), reports)
    return ResampledEpisode(episode.with_streams(out), report)


def interpolate(stream: PoseStream, times: Ints) -> PoseStream:
    """`stream` at sorted `times` inside its time range (linear translation, slerp rotation), off any grid."""
    if len(stream) < 2:
        return stream.take(np.zeros(len(times), dtype=np.int64), np.asarray(times, dtype=np.int64))
    out = _linear(stream, np.asarray(times, dtype=np.int64))
    assert isinstance(out, PoseStream)
    return out


def _select(episode: Episode, channels: Sequence[str] | None) -> dict[str, Stream]:
    """The streams named in `channels` (all when None); ChannelError for a name the episode lacks."""
    streams = episode.streams
    if channels is None:
        return dict(streams)
    for name in channels:
        if name not in streams:
            raise ChannelError(name, list(streams))
    return {name: streams[name] for name in channels}


def _timed(stream: Stream) -> bool:
    """Whether `stream` limits the grid: non-empty, not static, not events."""
    return len(stream) > 0 and not getattr(stream, "static", False) and not isinstance(stream, EventStream)


def _grid(streams: Mapping[str, Stream], fps: float) -> Ints:
    """Ticks t0 + round(k·1e9/fps) within the overlap of the timed streams; ResampleError if < 2 ticks."""
    timed = {name: s for name, s in streams.items() if _timed(s)}
    if not timed:
        raise ResampleError("no numeric, pose or image stream with samples to define a time grid")
    start = max(s.start_ns for s in timed.values())
    end = min(s.end_ns for s in timed.values())
    if start > end:
        ranges = "; ".join(f"{n}: {s.start_ns}..{s.end_ns}" for n, s in timed.items())
        raise ResampleError(f"streams do not overlap in time ({ranges})")
    k = np.arange(int((end - start) * fps / 1e9) + 2)
    grid = start + np.round(k * 1e9 / fps).astype(np.int64)
    grid = grid[grid <= end]
    if len(grid) < 2:
        raise ResampleError(
            f"overlap of {(end - start) / 1e9:.6f} s gives one tick at {fps} fps; need at least 2 "
            "(raise fps or select streams that overlap longer)"
        )
    return grid


def _resample_stream(name: str, stream: Stream, grid: Ints, method: Method) -> tuple[Stream, StreamReport]:
    """One stream on `grid` and its report."""
    new, used, offset, dropped = _apply(stream, grid, method)
    ts, kept = stream.timestamps, used == "kept"
    outside = int(np.searchsorted(ts, grid[0]) + len(ts) - np.searchsorted(ts, grid[-1], side="right"))
    report = StreamReport(
        channel=name,
        kind=stream.kind,
        method=used,
        samples_in=len(stream),
        samples_out=len(new),
        max_offset_ns=offset,
        outside=0 if kept else outside,
        dropped=dropped,
        dropped_start_ns=0 if kept else max(0, int(grid[0]) - stream.start_ns),
        dropped_end_ns=0 if kept else max(0, stream.end_ns - int(grid[-1])),
    )
    return new, report


def _apply(stream: Stream, grid: Ints, method: Method) -> tuple[Stream, str, int, int]:
    """(stream on the grid, method used, largest nearest offset in ns, samples dropped); static/empty kept."""
    if len(stream) == 0 or getattr(stream, "static", False):
        return stream, "kept", 0, 0
    if isinstance(stream, EventStream):
        events, offset, dropped = _snap_events(stream, grid)
        return events, "nearest", offset, dropped
    if method == "linear" and isinstance(stream, NumericStream | PoseStream):
        return _linear(stream, grid), "linear", 0, 0
    idx = _nearest(stream.timestamps, grid)
    return stream.take(idx, grid), "nearest", int(np.abs(stream.timestamps[idx] - grid).max()), 0


def _nearest(ts: Ints, at: Ints) -> Ints:
    """Index of the element of sorted `ts` nearest to each of `at` (ties pick the earlier one)."""
    right = np.searchsorted(ts, at).clip(0, len(ts) - 1)
    left = (right - 1).clip(0)
    return np.where(at - ts[left] <= ts[right] - at, left, right)


def _weights(ts: Ints, grid: Ints) -> tuple[Ints, Floats]:
    """Per tick the lower bracketing sample `lo` and the weight w of sample lo+1 (grid within ts range)."""
    lo = (np.searchsorted(ts, grid, side="right") - 1).clip(0, len(ts) - 2)
    w = (grid - ts[lo]) / (ts[lo + 1] - ts[lo])
    return lo, w


def _lerp(values: Floats, lo: Ints, w: Floats) -> Floats:
    """Rows interpolated between lo and lo+1, all columns at once; weight 0 or 1 copies the row."""
    a, b = values[lo], values[lo + 1]
    wc = w.reshape(-1, *([1] * (values.ndim - 1)))
    return np.where(wc == 0, a, np.where(wc == 1, b, a * (1 - wc) + b * wc))


def _linear(stream: NumericStream | PoseStream, grid: Ints) -> NumericStream | PoseStream:
    """Linear values (numeric) or linear translation + slerp rotation (pose) at the ticks."""
    lo, w = _weights(stream.timestamps, grid)
    if isinstance(stream, NumericStream):
        return replace(stream, timestamps=grid, values=_lerp(stream.values, lo, w))
    return replace(
        stream,
        timestamps=grid,
        translation=_lerp(stream.translation, lo, w),
        quaternion=_slerp(stream.timestamps, stream.quaternion, grid, lo, w),
    )


def _slerp(ts: Ints, quat: Floats, grid: Ints, lo: Ints, w: Floats) -> Floats:
    """Slerp of xyzw quaternions at the ticks; a tick next to an invalid (NaN) rotation gets NaN."""
    from scipy.spatial.transform import Rotation, Slerp  # slow to import (~0.25 s): loaded for rotation work only
    valid = np.asarray(np.isfinite(quat).all(axis=1))
    filled = np.where(valid[:, None], quat, [0.0, 0.0, 0.0, 1.0])
    seconds = (ts - ts[0]) / 1e9
    out = canonical(Slerp(seconds, Rotation.from_quat(filled))((grid - ts[0]) / 1e9).as_quat())
    poisoned = (~valid[lo] & (w < 1)) | (~valid[lo + 1] & (w > 0))
    out[poisoned] = np.nan
    return out


def _snap_events(stream: EventStream, grid: Ints) -> tuple[EventStream, int, int]:
    """Events moved to their nearest tick: earlier ones to the first tick (still in effect), later dropped.

    Returns (stream, largest offset of the in-range events, number dropped). Several events may share a tick.
    """
    ts = stream.timestamps
    keep = np.flatnonzero(ts <= grid[-1])
    ticks = grid[_nearest(grid, ts[keep])]
    inside = ts[keep] >= grid[0]
    offset = int(np.abs(ticks - ts[keep])[inside].max(initial=0))
    return stream.take(keep, ticks), offset, len(ts) - len(keep)
