"""TensorFlow Datasets reads robokit's RLDS point clouds: (P, C) float32 per step and the int32 count
(`make conformance`)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from robokit.export.job import export
from robokit.samples.pointbag import FRAMES, cloud_points, write_point_bag

pytestmark = pytest.mark.conformance
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def test_tfds_reads_padded_clouds_and_counts(tmp_path: Path) -> None:
    import tensorflow_datasets as tfds

    bag = write_point_bag(tmp_path / "bag")
    assert export([bag], ["rlds"], tmp_path / "out", {"fps": 10}, use_cache=False).status == "done"
    root = next((tmp_path / "out" / "rlds").rglob("features.json")).parent
    builder = tfds.builder_from_directory(str(root))
    observation = builder.info.features["steps"].feature["observation"]
    largest = len(cloud_points(FRAMES - 1))
    assert observation["lidar_points"].shape == (largest, 4) and observation["lidar_points"].dtype == np.float32
    steps = list(next(iter(builder.as_dataset(split="train")))["steps"].as_numpy_iterator())
    assert len(steps) == FRAMES
    for t, step in enumerate(steps):
        n = int(step["observation"]["lidar_points_count"])
        assert n == len(cloud_points(t))
        assert np.array_equal(step["observation"]["lidar_points"][:n], cloud_points(t))
