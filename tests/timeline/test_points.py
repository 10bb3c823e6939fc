"""Point streams: laser scan geometry, lazy clouds re-indexed by take, the info line."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robokit.timeline.points import XYZ, XYZI, ArrayPointSource, Cloud, PointStream, Scan, describe


def test_scan_points_are_the_valid_ranges_in_the_plane() -> None:
    ranges = np.array([1.0, np.nan, 0.05, 2.0, 20.0], np.float32)
    scan = Scan(0.0, math.pi / 4, 0.1, 10.0, ranges, np.array([1, 2, 3, 4, 5], np.float32))
    cloud = Cloud.of_scan(scan)
    assert cloud.fields == XYZI and scan.valid().tolist() == [True, False, False, True, False]
    assert np.allclose(cloud.points, [[1, 0, 0, 1], [-math.sqrt(2), math.sqrt(2), 0, 4]], atol=1e-6)  # 0 and 135°
    assert scan.angle_max == pytest.approx(math.pi)
    bare = Cloud.of_scan(Scan(0.0, 0.1, 0.0, 5.0, np.full(3, np.inf, np.float32), np.zeros(0, np.float32)))
    assert bare.fields == XYZ and bare.points.shape == (0, 3) and len(bare) == 0


def test_take_reindexes_without_decoding() -> None:
    clouds = [Cloud(np.full((n, 3), n, np.float32), XYZ) for n in (1, 2, 3)]
    s = PointStream("lidar/points", np.array([10, 20, 30]), source=ArrayPointSource(clouds), counts=[1, 2, 3])
    picked = s.take(np.array([2, 2, 0]), np.array([1, 2, 3]))
    assert picked.counts.tolist() == [3, 3, 1] and picked.max_points == 3
    assert [len(c) for c in picked.clouds()] == [3, 3, 1]
    assert describe(s) == "point clouds (x, y, z), 1–3 points each, 6 in all"
    with pytest.raises(ValueError, match="2 counts for 3 timestamps"):
        PointStream("bad", np.array([1, 2, 3]), counts=[1, 2])
