"""The real `lerobot` package loads what robokit wrote (run by `make conformance`)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import robokit

pytestmark = pytest.mark.conformance


@pytest.fixture()
def lerobot_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-datasets"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return 10 * np.log10(255**2 / max(mse, 1e-9))


def test_lerobot_dataset_loads_with_source_values(lerobot_root: Path, sample_dir: Path, lerobot_env: None) -> None:
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    ds = LeRobotDataset("robokit/sample", root=lerobot_root)
    sources = robokit.open(sorted(sample_dir.iterdir()))
    assert ds.num_episodes == 2
    channels = ["joints/position", "front/rgb", "wrist/rgb", "tf/tool0"]
    aligned = [robokit.resample(s, 15, channels=channels) for s in sources]
    assert ds.num_frames == sum(len(a["joints/position"]) for a in aligned)
    assert {"observation.state", "action", "observation.images.front", "observation.images.wrist"} <= set(ds.features)
    assert ds.features["observation.images.front"]["shape"] == (120, 160, 3)
    offset = 0
    for ep_index, (src, a) in enumerate(zip(sources, aligned, strict=True)):
        n = len(a["joints/position"])
        for i in (0, n // 2, n - 1):
            item = ds[offset + i]
            assert int(item["episode_index"]) == ep_index and int(item["frame_index"]) == i
            assert item["task"] == src.tasks[0]
            assert np.allclose(item["observation.state"].numpy(), a["joints/position"].values[i], atol=1e-6)
            for cam in ("front", "wrist"):
                img = (item[f"observation.images.{cam}"].numpy().transpose(1, 2, 0) * 255).round()
                expected = a[f"{cam}/rgb"].frame(i).array()
                assert img.shape == expected.shape
                assert _psnr(img, expected) > 30, f"episode {ep_index} frame {i} {cam}"
                if i > 0:  # right order: the neighbouring source frame matches worse
                    assert _psnr(img, expected) > _psnr(img, a[f"{cam}/rgb"].frame(i - 1).array())
        offset += n


def test_delta_timestamps(lerobot_root: Path, lerobot_env: None) -> None:
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    ds = LeRobotDataset("robokit/sample", root=lerobot_root,
                        delta_timestamps={"observation.images.front": [-1 / 15, 0.0], "action": [0.0, 1 / 15, 2 / 15]})
    item = ds[5]
    assert tuple(item["observation.images.front"].shape) == (2, 3, 120, 160)
    assert tuple(item["action"].shape) == (3, 7)
    assert not bool(item["action_is_pad"].any())


def test_rolled_over_files_load_like_one_file(lerobot_root: Path, lerobot_rolled_root: Path,
                                              lerobot_env: None) -> None:
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    one = LeRobotDataset("robokit/sample", root=lerobot_root)
    rolled = LeRobotDataset("robokit/sample", root=lerobot_rolled_root)
    assert rolled.num_frames == one.num_frames
    first_of_second = int(one.meta.episodes[1]["dataset_from_index"])
    for i in (0, first_of_second - 1, first_of_second, one.num_frames - 1):
        a, b = one[i], rolled[i]
        assert int(a["episode_index"]) == int(b["episode_index"]) and int(a["frame_index"]) == int(b["frame_index"])
        assert np.array_equal(a["action"].numpy(), b["action"].numpy())
        assert np.array_equal(a["observation.images.front"].numpy(), b["observation.images.front"].numpy())
