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


def test_robokit_reads_depth_that_lerobot_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """lerobot's own depth recording (its encoder defaults: depth_min 0.01 m, B-frames) read by robokit as the
    millimetres `LeRobotDataset` returns, and re-exported so that lerobot reads it back within 1 %."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    from robokit.samples.depthbag import depth_mm

    key = "observation.images.cam_depth"
    features = {key: {"dtype": "video", "shape": (HEIGHT, WIDTH, 1), "names": ["height", "width", "channels"],
                      "info": {"is_depth_map": True}},
                "observation.state": {"dtype": "float32", "shape": (2,), "names": ["a", "b"]}}
    root = tmp_path / "recorded"
    recorded = LeRobotDataset.create("lerobot/depth", fps=10, root=root, features=features, use_videos=True)
    for t in range(FRAMES):
        recorded.add_frame({key: depth_mm(t)[..., None], "observation.state": np.full(2, t, np.float32),
                            "task": "look"})
    recorded.save_episode()
    recorded.finalize()
    ours = robokit.open(root)[0].streams["cam/depth"]
    assert isinstance(ours, ImageStream) and ours.encoding == "16UC1"
    theirs = LeRobotDataset("lerobot/depth", root=root)
    for t, frame in enumerate(ours.frames()):
        assert np.abs(frame.array().astype(np.float64) - theirs[t][key].numpy()[0]).max() <= 1
    assert export([root], ["lerobot"], tmp_path / "out", use_cache=False).status == "done"
    again = LeRobotDataset("robokit/depth", root=tmp_path / "out" / "lerobot")
    for t in range(FRAMES):
        want, got = theirs[t][key].numpy()[0], again[t][key].numpy()[0]
        assert np.all(np.abs(got - want) <= 0.01 * want + 1)
