"""Point clouds in WebDataset: one N×C float32 `.npy` per step (or per step of an episode sample), described in
dataset.json, values equal to the recorded points; steps outside a stream's time range hold 0 points."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest

import robokit
from robokit.converters.options import WriterOptions
from robokit.samples.pointbag import FRAMES, RANGE_MIN, cloud_points, scan_ranges, write_point_bag

from .conftest import SMALL


@pytest.fixture(scope="module")
def bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_point_bag(tmp_path_factory.mktemp("points") / "bag")


def _write(bag: Path, out: Path, **extra: object) -> tuple[Path, list[str]]:
    options = WriterOptions(fps=10, extra={"dataset_name": "pts", "wds_shard_mb": 0.5, **extra})
    result = SMALL.write(robokit.open(bag), out, options)
    return out / "webdataset", result.warnings


def _members(folder: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for shard in sorted(folder.glob("*.tar")):
        with tarfile.open(shard) as tar:
            for m in tar.getmembers():
                f = tar.extractfile(m)
                assert f is not None
                out[m.name] = f.read()
    return out


def _npy(data: bytes) -> np.ndarray:
    return np.load(io.BytesIO(data), allow_pickle=False)


def test_step_samples_hold_each_cloud(bag: Path, tmp_path: Path) -> None:
    folder, warnings = _write(bag, tmp_path)
    members = _members(folder)
    for t in range(FRAMES):
        cloud = _npy(members[f"bag_{t:06d}.lidar_points.npy"])
        assert cloud.dtype == np.float32 and np.array_equal(cloud, cloud_points(t))
        scan = _npy(members[f"bag_{t:06d}.laser_scan.npy"])
        ranges, intensities = scan_ranges(t)
        valid = np.isfinite(ranges) & (ranges >= RANGE_MIN)
        assert scan.shape == (int(valid.sum()), 4)
        assert np.allclose(np.hypot(scan[:, 0], scan[:, 1]), ranges[valid])
        assert np.allclose(scan[:, 3], intensities[valid])
    keys = json.loads((folder / "dataset.json").read_text())["keys"]
    assert keys["lidar_points.npy"] == {"type": "points", "channel": "lidar/points", "dtype": "float32",
                                        "names": ["x", "y", "z", "intensity"], "shape": ["N", 4], "frame": "lidar"}
    assert not [w for w in warnings if "point" in w]
    assert SMALL.check(folder) == []


def test_episode_samples_hold_one_npy_per_step(bag: Path, tmp_path: Path) -> None:
    folder, _ = _write(bag, tmp_path, wds_samples="episode")
    members = _members(folder)
    assert np.array_equal(_npy(members["bag.lidar_points.000004.npy"]), cloud_points(4))
    assert SMALL.check(folder) == []


def test_steps_outside_the_stream_have_no_points(bag: Path, tmp_path: Path) -> None:
    (ep,) = robokit.open(bag)
    lidar = ep.streams["lidar/points"]
    short = ep.with_streams({**ep.streams, "lidar/points": lidar.take(np.arange(3))})
    result = SMALL.write([short], tmp_path, WriterOptions(fps=10, resample="linear", extra={"wds_shard_mb": 0.5}))
    members = _members(tmp_path / "webdataset")
    assert _npy(members["bag_000005.lidar_points.npy"]).shape == (0, 4)
    assert any("3 of 6 steps are outside the stream's time range" in w for w in result.warnings)
    assert any("lidar/points: point clouds are never interpolated" in w for w in result.warnings)
