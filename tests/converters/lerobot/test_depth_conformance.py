"""The real `lerobot` returns the recorded millimetres of robokit's depth features within 1 % (`make conformance`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robokit
from robokit.export.job import export
from robokit.samples.depthbag import FRAMES, HEIGHT, WIDTH, write_depth_bag
from robokit.timeline import ImageStream
from robokit.timeline.depth import millimetre_stream

pytestmark = pytest.mark.conformance
CAMERAS = ("back", "front", "side", "top", "wrist")  # 16UC1 RVL, 16UC1, 16UC1 PNG, 32FC1 inverse PNG, 32FC1


def test_lerobot_dataset_returns_depth_in_millimetres(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    bag = write_depth_bag(tmp_path / "bag")
    assert export([bag], ["lerobot"], tmp_path / "out", {"fps": 10}, use_cache=False).status == "done"
    source = robokit.open(bag)[0]
    ds = LeRobotDataset("robokit/depth", root=tmp_path / "out" / "lerobot")
    keys = {f"observation.images.{cam}_depth" for cam in CAMERAS}
    assert set(ds.meta.depth_keys) == keys and ds.num_frames == FRAMES
    for cam in CAMERAS:
        stream = source.streams[f"{cam}/depth"]
        assert isinstance(stream, ImageStream)
        for t, frame in enumerate(millimetre_stream(stream).frames()):
            want = frame.array().astype(np.float64)
            got = ds[t][f"observation.images.{cam}_depth"].numpy()
            assert got.shape == (1, HEIGHT, WIDTH)  # one channel, millimetres (lerobot's default output unit)
            assert np.array_equal(got[0] == 0, want == 0)
            assert np.all(np.abs(got[0] - want) <= 0.01 * want), (cam, t)
    meters = LeRobotDataset("robokit/depth", root=tmp_path / "out" / "lerobot", depth_output_unit="m")
    assert float(meters[0]["observation.images.front_depth"].max()) < 10.0
