"""Point clouds in writers, one layout for all: per step an N×C float32 array, columns `x, y, z[, intensity]`.

Step-based writers (WebDataset, RLDS) place each point stream on the dataset's grid by the nearest cloud
(never interpolated) within the stream's own time range; a step outside it has no cloud (0 points).
Points are in the cloud's own frame (`frame_id`) as recorded; a cloud in a world frame (`world`, `map`,
`odom`, or none given) takes the requested world axes, as poses do. RLDS pads every step to a fixed
count, the largest cloud in the dataset up to `MAX_POINTS` (beyond it clouds are cut, with a warning).
Writers that cannot hold point clouds say so for each stream (`unheld`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from robokit.converters.prepare import PreparedEpisode
from robokit.frames import world_change
from robokit.limits import MAX_POINTS
from robokit.timeline import Episode
from robokit.timeline.points import NEAREST_ONLY, Cloud, PointStream

WORLD_FRAMES = frozenset({"", "world", "map", "odom"})
SOURCE_CONVENTION = "ros"  # the axes readers give point streams in (REP-103)


def point_streams(episode: Episode) -> dict[str, PointStream]:
    """The episode's point streams by channel, sorted."""
    return {n: s for n, s in sorted(episode.streams.items()) if isinstance(s, PointStream)}


def unheld(fmt: str, episode: Episode) -> list[str]:
    """One warning per point stream a format cannot hold."""
    return [f"{fmt} cannot hold point clouds; {name} not written" for name in point_streams(episode)]


def point_key(channel: str) -> str:
    """A point channel's member / feature name: `lidar/points` → `lidar_points`."""
    return channel.replace("/", "_")


def axes_change(frame_id: str, convention: str, world: frozenset[str] = WORLD_FRAMES) -> np.ndarray | None:
    """The rotation taking points in `frame_id` to `convention`'s world axes; None when they stay as recorded."""
    if frame_id not in world:
        return None
    w = world_change(SOURCE_CONVENTION, convention)
    return None if np.allclose(w, np.eye(3)) else w


def frame_label(frame_id: str, convention: str) -> str:
    """The frame a written cloud is in, for dataset descriptions: its own, or a world frame in `convention` axes."""
    return frame_id if axes_change(frame_id, convention) is None else f"{frame_id or 'world'} ({convention} axes)"


def in_axes(points: np.ndarray, rotation: np.ndarray | None) -> np.ndarray:
    """N×C float32 points with x, y, z rotated by `rotation` (None: unchanged)."""
    if rotation is None or not len(points):
        return points
    out = points.copy()
    out[:, :3] = (points[:, :3].astype(np.float64) @ rotation.T).astype(np.float32)
    return out


def on_grid(stream: PointStream, grid: np.ndarray) -> tuple[PointStream, np.ndarray]:
    """(the nearest cloud at each tick, which ticks fall within the stream's time range and so have one)."""
    ts = stream.timestamps
    right = np.searchsorted(ts, grid).clip(0, len(ts) - 1)
    left = (right - 1).clip(0)
    nearest = np.where(grid - ts[left] <= ts[right] - grid, left, right)
    inside = (grid >= ts[0]) & (grid <= ts[-1])
    return stream.take(nearest, grid), inside


def step_clouds(stream: PointStream, grid: np.ndarray, convention: str) -> Iterator[np.ndarray]:
    """Per tick the N×C float32 cloud (0 rows outside the stream's time range), in the writer's axes."""
    placed, inside = on_grid(stream, grid)
    rotation = axes_change(stream.frame_id, convention)
    empty = np.zeros((0, len(stream.fields)), dtype=np.float32)
    clouds: Iterator[Cloud] = placed.clouds(np.flatnonzero(inside).tolist())
    for has in inside.tolist():
        yield in_axes(next(clouds).points, rotation) if has else empty


def prepared_clouds(p: PreparedEpisode, convention: str) -> dict[str, list[np.ndarray]]:
    """Per point channel of the episode, its step clouds on the prepared grid (see `step_clouds`)."""
    return {name: list(step_clouds(s, p.timestamps, convention)) for name, s in point_streams(p.source).items()}


def grid_notes(p: PreparedEpisode, method: str) -> list[str]:
    """What placing the point streams on the grid changed: steps without a cloud, `linear` not applying."""
    notes = []
    for name, stream in point_streams(p.source).items():
        inside, steps = int(on_grid(stream, p.timestamps)[1].sum()), p.n_frames
        notes += [f"{p.source.id}: {name}: {NEAREST_ONLY}"] if method == "linear" else []
        if inside < steps:
            notes.append(f"{p.source.id}: {name}: {steps - inside} of {steps} steps are outside the stream's "
                         "time range and have no points")
    return notes


def capacity(episodes: Sequence[Episode]) -> tuple[int, list[str]]:
    """The fixed point count of padded layouts: the largest cloud of any episode, at most MAX_POINTS; with a
    warning naming the streams whose clouds are cut."""
    largest = {name: s.max_points for ep in episodes for name, s in point_streams(ep).items()}
    cut = sorted(n for n, m in largest.items() if m > MAX_POINTS)
    notes = [f"{n}: clouds of up to {largest[n]} points cut to the first {MAX_POINTS} (robokit.limits.MAX_POINTS)"
             for n in cut]
    return min(max([1, *largest.values()]), MAX_POINTS), notes


COUNT_SUFFIX = "_count"  # the feature giving each step's points of a padded point feature


def unpadded(array: np.ndarray, counts: np.ndarray, fields: tuple[str, ...]) -> list[Cloud]:
    """The clouds of a (T, P, C) padded array and its (T,) counts (the inverse of `padded`)."""
    size = array.shape[1]
    return [Cloud(np.asarray(array[t, : min(max(int(n), 0), size)], dtype=np.float32), fields)
            for t, n in enumerate(counts.tolist())]


def padded(clouds: Sequence[np.ndarray], size: int, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """(T, size, columns) float32 clouds padded with zeros (cut at `size`) and (T,) int32 point counts."""
    out = np.zeros((len(clouds), size, columns), dtype=np.float32)
    counts = np.zeros(len(clouds), dtype=np.int32)
    for t, cloud in enumerate(clouds):
        n = min(len(cloud), size)
        out[t, :n] = cloud[:n]
        counts[t] = n
    return out, counts
