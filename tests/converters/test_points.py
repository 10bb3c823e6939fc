"""The shared point layout of writers: nearest cloud per step within the stream, world axes, padding, capacity."""

from __future__ import annotations

import numpy as np
import pytest

from robokit.converters.points import axes_change, capacity, in_axes, on_grid, padded, step_clouds
from robokit.timeline import Episode, EpisodeMeta
from robokit.timeline.points import XYZ, ArrayPointSource, Cloud, PointStream


def _stream(frame: str = "lidar", counts: tuple[int, ...] = (1, 2, 3)) -> PointStream:
    clouds = [Cloud(np.arange(3 * n, dtype=np.float32).reshape(n, 3) + 100 * i, XYZ) for i, n in enumerate(counts)]
    return PointStream("lidar/points", np.array([100, 200, 300]), source=ArrayPointSource(clouds), counts=counts,
                       frame_id=frame)


def test_nearest_cloud_inside_the_time_range_only() -> None:
    placed, inside = on_grid(_stream(), np.array([50, 140, 160, 300, 400]))
    assert placed.positions.tolist() == [0, 0, 1, 2, 2] and inside.tolist() == [False, True, True, True, False]
    steps = list(step_clouds(_stream(), np.array([50, 160, 400]), "ros"))
    assert [s.shape for s in steps] == [(0, 3), (2, 3), (0, 3)]


def test_world_frame_clouds_take_the_requested_axes() -> None:
    assert axes_change("lidar", "opencv") is None and axes_change("map", "ros") is None
    w = axes_change("map", "opencv")
    assert w is not None
    assert np.allclose(in_axes(np.array([[1, 2, 3, 7]], np.float32), w), [[-2, -3, 1, 7]])  # FLU → RDF, intensity kept
    (cloud,) = step_clouds(_stream(""), np.array([100]), "opencv")
    assert np.allclose(cloud, [[-1, -2, 0]])


def test_padding_and_capacity(monkeypatch: pytest.MonkeyPatch) -> None:
    out, counts = padded([np.ones((2, 3), np.float32), np.zeros((0, 3), np.float32), np.ones((5, 3))], 4, 3)
    assert out.shape == (3, 4, 3) and counts.tolist() == [2, 0, 4] and out[0, 2:].sum() == 0
    ep = Episode(EpisodeMeta("x", "x"), {"lidar/points": _stream(counts=(1, 7, 3))})
    assert capacity([ep]) == (7, [])
    assert capacity([Episode(EpisodeMeta("y", "y"), {})]) == (1, [])
    monkeypatch.setattr("robokit.converters.points.MAX_POINTS", 4)
    size, notes = capacity([ep])
    assert size == 4 and notes == ["lidar/points: clouds of up to 7 points cut to the first 4 "
                                   "(robokit.limits.MAX_POINTS)"]
