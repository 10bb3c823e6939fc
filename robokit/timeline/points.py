"""Point clouds and laser scans on the timeline: a PointStream whose clouds decode on access, like images.

A cloud is an N×C float32 array whose columns are its `fields`: `x, y, z` (metres, in the stream's
`frame_id`) then `intensity` when recorded. A laser scan keeps its ranges too (`Cloud.scan`); its points
are the valid ranges (finite, within range_min..range_max) in the scan plane (z = 0). Point streams are
never interpolated: resampling picks the nearest cloud.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar, Protocol

import numpy as np

from robokit.timeline.streams import Stream, ints

XYZ = ("x", "y", "z")
XYZI = ("x", "y", "z", "intensity")
NEAREST_ONLY = "point clouds are never interpolated; the nearest cloud is used (resample linear was asked)"


@dataclass(frozen=True)
class Scan:
    """One planar laser scan as recorded: ranges (m) at angle_min + i·angle_increment (rad), intensities or none."""

    angle_min: float
    angle_increment: float
    range_min: float
    range_max: float
    ranges: np.ndarray
    intensities: np.ndarray
    time_increment: float = 0.0  # s between measurements
    scan_time: float = 0.0  # s between scans

    @property
    def angle_max(self) -> float:
        return self.angle_min + self.angle_increment * max(len(self.ranges) - 1, 0)

    def valid(self) -> np.ndarray:
        """Which ranges are readings: finite and within range_min..range_max (ROS REP 117)."""
        r = self.ranges
        return np.asarray(np.isfinite(r) & (r >= self.range_min) & (r <= self.range_max), dtype=bool)

    def points(self) -> np.ndarray:
        """The valid readings as N×3 (x, y, 0), or N×4 with intensity when the scan has one per range."""
        ok = self.valid()
        angles = self.angle_min + self.angle_increment * np.flatnonzero(ok)
        r = self.ranges[ok].astype(np.float64)
        columns = [r * np.cos(angles), r * np.sin(angles), np.zeros(len(r))]
        if len(self.intensities) == len(self.ranges):
            columns.append(self.intensities[ok].astype(np.float64))
        return np.stack(columns, axis=1).astype(np.float32)


@dataclass(frozen=True)
class Cloud:
    """One point cloud: `points` N×C float32, columns named by `fields`; `scan` when it came from a laser scan."""

    points: np.ndarray
    fields: tuple[str, ...]
    scan: Scan | None = None

    @classmethod
    def of_scan(cls, scan: Scan) -> Cloud:
        points = scan.points()
        return cls(points, XYZI if points.shape[1] == 4 else XYZ, scan)

    def __len__(self) -> int:
        return int(self.points.shape[0])


class PointSource(Protocol):
    """Where a point stream's clouds come from; positions index the source's own cloud order."""

    def iter_clouds(self, positions: Iterable[int]) -> Iterator[Cloud]:
        """Yield the clouds at `positions`, in that order (repeats allowed)."""
        ...


class ArrayPointSource:
    """Clouds held in memory (generated data, tests)."""

    def __init__(self, clouds: Sequence[Cloud]) -> None:
        self._clouds = list(clouds)

    def __len__(self) -> int:
        return len(self._clouds)

    def iter_clouds(self, positions: Iterable[int]) -> Iterator[Cloud]:
        for p in positions:
            yield self._clouds[int(p)]


@dataclass(frozen=True)
class PointStream(Stream):
    """Point clouds or laser scans whose points decode on access; `positions` index clouds in `source`.

    `counts` holds each sample's number of points (known from the index pass, without decoding), `fields`
    the columns of every cloud, `scan` whether samples are laser scans (ranges kept for writers that can).
    """

    kind: ClassVar[str] = "points"
    source: PointSource | None = None
    positions: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    counts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    fields: tuple[str, ...] = XYZ
    frame_id: str = ""
    scan: bool = False

    def __post_init__(self) -> None:
        positions = np.asarray(self.positions, dtype=np.int64)
        if len(positions) == 0 and len(self.timestamps):
            positions = np.arange(len(self.timestamps), dtype=np.int64)
        super().__post_init__()
        self._hold(positions=positions, counts=np.asarray(self.counts, dtype=np.int64).reshape(-1))
        if not len(positions) == len(self.counts) == len(self.timestamps):
            raise ValueError(f"{self.name}: {len(positions)} positions and {len(self.counts)} counts for "
                             f"{len(self)} timestamps")

    @property
    def max_points(self) -> int:
        return int(self.counts.max(initial=0))

    def take(self, indices: np.ndarray, timestamps: np.ndarray | None = None) -> PointStream:
        return replace(self, timestamps=self._times(indices, timestamps), positions=self.positions[indices],
                       counts=self.counts[indices])

    def clouds(self, indices: Sequence[int] | None = None) -> Iterator[Cloud]:
        """Clouds in stream order (or at `indices`), decoded one at a time."""
        if self.source is None:
            raise ValueError(f"{self.name}: point stream has no cloud source")
        positions = self.positions if indices is None else self.positions[np.asarray(indices, dtype=np.int64)]
        return self.source.iter_clouds(ints(positions))


def describe(stream: PointStream) -> str:
    """What `robokit info` says of a point stream: kind, fields, frame, points per sample."""
    what = "laser scans" if stream.scan else "point clouds"
    counts = stream.counts
    span = f"{int(counts.min())}–{int(counts.max())} points each" if len(counts) else "no points"
    frame = f" in frame {stream.frame_id!r}" if stream.frame_id else ""
    return f"{what} ({', '.join(stream.fields)}){frame}, {span}, {int(counts.sum())} in all"
