"""Point clouds in RLDS: `observation/<name>` a (P, C) float32 tensor padded to the dataset's largest cloud, with
`observation/<name>_count`; structure checked here (the TFDS load is in test_conformance)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import robokit
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.rlds.example import decode_example
from robokit.converters.rlds.features import leaves
from robokit.converters.rlds.records import iter_records
from robokit.samples.pointbag import FRAMES, SCAN_RANGES, cloud_points, write_point_bag
from robokit.timeline.points import PointStream

OPTIONS = WriterOptions(fps=10, extra={"dataset_name": "pts"})


@pytest.fixture(scope="module")
def bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_point_bag(tmp_path_factory.mktemp("points") / "bag")


def _write(episodes: list[robokit.Episode], out: Path) -> tuple[Path, list[str]]:
    result = get_converter("rlds").write(episodes, out, OPTIONS)
    return out / "rlds" / "pts" / "1.0.0", result.warnings


def _steps(root: Path) -> dict[str, np.ndarray]:
    (record,) = [r for shard in sorted(root.glob("*.tfrecord*")) for r in iter_records(shard)]
    return {k: v for k, v in decode_example(record).items() if isinstance(v, np.ndarray)}


def test_clouds_padded_to_the_largest_with_counts(bag: Path, tmp_path: Path) -> None:
    root, warnings = _write(robokit.open(bag), tmp_path)
    features = leaves(json.loads((root / "features.json").read_text()))
    largest = len(cloud_points(FRAMES - 1))
    lidar, count = features["steps/observation/lidar_points"], features["steps/observation/lidar_points_count"]
    assert lidar.shape == (largest, 4) and lidar.dtype == "float32" and "[x, y, z, intensity]" in lidar.doc
    assert count.shape == () and count.dtype == "int32" and "frame: lidar" in count.doc
    assert features["steps/observation/laser_scan"].shape == (largest, 4)  # one capacity for every point feature
    steps = _steps(root)
    clouds = steps["steps/observation/lidar_points"].reshape(FRAMES, largest, 4)
    counts = steps["steps/observation/lidar_points_count"]
    assert counts.tolist() == [len(cloud_points(t)) for t in range(FRAMES)]
    for t in range(FRAMES):
        n = counts[t]
        assert np.array_equal(clouds[t, :n], cloud_points(t)) and not clouds[t, n:].any()  # zero padding
    assert steps["steps/observation/laser_scan_count"].tolist() == [SCAN_RANGES - 2] * FRAMES
    assert not [w for w in warnings if "point" in w]
    assert get_converter("rlds").check(tmp_path / "rlds") == []
    (back,) = robokit.open(tmp_path / "rlds")  # robokit's reader restores the point streams
    stream = back.streams["lidar/points"]
    assert isinstance(stream, PointStream) and stream.fields == ("x", "y", "z", "intensity")
    assert stream.counts.tolist() == counts.tolist() and not [n for n in back.streams if n.endswith("_count")]
    assert all(np.array_equal(c.points, cloud_points(t)) for t, c in enumerate(stream.clouds()))


def test_clouds_beyond_the_limit_are_cut_with_a_warning(bag: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("robokit.converters.points.MAX_POINTS", 5)
    root, warnings = _write(robokit.open(bag), tmp_path)
    steps = _steps(root)
    assert steps["steps/observation/lidar_points_count"].tolist() == [3, 4, 5, 5, 5, 5]
    assert np.array_equal(steps["steps/observation/lidar_points"].reshape(FRAMES, 5, 4)[5], cloud_points(5)[:5])
    assert any("lidar/points: clouds of up to 8 points cut to the first 5" in w for w in warnings)
