"""TensorFlow Datasets decodes robokit's RLDS depth as uint16 millimetres, exactly (`make conformance`)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import robokit
from robokit.export.job import export
from robokit.samples.depthbag import FRAMES, HEIGHT, WIDTH, write_depth_bag
from robokit.timeline import ImageStream
from robokit.timeline.depth import millimetre_stream

pytestmark = pytest.mark.conformance
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
CAMERAS = ("back", "front", "side", "top", "wrist")


def test_tfds_reads_uint16_depth(tmp_path: Path) -> None:
    import tensorflow_datasets as tfds

    bag = write_depth_bag(tmp_path / "bag")
    assert export([bag], ["rlds"], tmp_path / "out", {"fps": 10}, use_cache=False).status == "done"
    root = next((tmp_path / "out" / "rlds").rglob("features.json")).parent
    builder = tfds.builder_from_directory(str(root))
    observation = builder.info.features["steps"].feature["observation"]
    source = robokit.open(bag)[0]
    episode = next(iter(builder.as_dataset(split="train")))
    steps = list(episode["steps"].as_numpy_iterator())
    assert len(steps) == FRAMES
    for cam in CAMERAS:
        feature = observation[f"{cam}_depth"]
        assert isinstance(feature, tfds.features.Image) and feature.dtype == np.uint16
        assert feature.shape == (HEIGHT, WIDTH, 1)
        stream = source.streams[f"{cam}/depth"]
        assert isinstance(stream, ImageStream)
        for step, frame in zip(steps, millimetre_stream(stream).frames(), strict=True):
            got = step["observation"][f"{cam}_depth"]
            assert got.dtype == np.uint16 and np.array_equal(got[:, :, 0], frame.array())
