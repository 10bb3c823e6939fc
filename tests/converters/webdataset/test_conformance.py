"""The real `webdataset` (and `wids`, torch's DataLoader) read what robokit wrote (`make conformance`)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

import robokit

from .conftest import CHANNELS

pytestmark = pytest.mark.conformance


def _pattern(root: Path) -> str:
    return str(root / json.loads((root / "dataset.json").read_text())["shards"])


def test_every_sample_once_with_source_values(wds_steps: Path, sample_dir: Path) -> None:
    import webdataset as wds

    sources = {s.id: robokit.resample(s, 15, channels=CHANNELS) for s in robokit.open(sorted(sample_dir.iterdir()))}
    ds = wds.WebDataset(_pattern(wds_steps), shardshuffle=False, empty_check=True).decode("rgb8").to_tuple(
        "__key__", "front.png", "wrist.jpg", "state.npy", "action.npy", "meta.json")
    keys = []
    for key, front, wrist, state, action, meta in ds:
        m = re.fullmatch(r"(?P<ep>[A-Za-z0-9_\-]+)_(?P<t>\d{6})", key)
        assert m and meta["step"] == int(m["t"]) and meta["episode"] == m["ep"]
        src, t = sources[meta["episode_id"]], meta["step"]
        assert front.dtype == np.uint8 and front.ndim == 3 and action.dtype == np.float32
        assert np.array_equal(state, src["joints/position"].values[t].astype(np.float32))
        assert np.array_equal(front, src["front/rgb"].frame(t).array())
        assert np.array_equal(wrist, src["wrist/rgb"].frame(t).array())  # the recorded JPEG, decoded by PIL
        keys.append(key)
    assert len(keys) == len(set(keys)) == sum(len(s["joints/position"]) for s in sources.values())


def test_dataloader_workers_see_each_sample_once(wds_steps: Path) -> None:
    import torch.utils.data
    import webdataset as wds

    expected = [s["__key__"] for s in wds.WebDataset(_pattern(wds_steps), shardshuffle=False)]
    ds = wds.WebDataset(_pattern(wds_steps), shardshuffle=False, workersplitter=wds.split_by_worker).to_tuple(
        "__key__")
    # spawn: a fork of this multi-threaded process (TensorFlow may be loaded) can deadlock
    loader = torch.utils.data.DataLoader(ds, num_workers=2, batch_size=None, multiprocessing_context="spawn")
    seen = [key for (key,) in loader]
    assert sorted(seen) == sorted(expected) and len(seen) == len(set(seen))


def test_wids_index_gives_random_access(wds_steps: Path) -> None:
    import wids

    index = wds_steps / "sample.shardindex.json"
    ds = wids.ShardListDataset(os.path.abspath(index), localname=lambda url: url, transformations=[])
    n = sum(e["nsamples"] for e in json.loads(index.read_text())["shardlist"])
    assert len(ds) == n
    last = ds[n - 1]
    meta = json.loads(last[".meta.json"].read() if hasattr(last[".meta.json"], "read") else last[".meta.json"])
    assert last["__key__"] == f"{meta['episode']}_{meta['step']:06d}" and meta["is_last"]


def test_episode_samples_decode(wds_episodes: Path) -> None:
    import webdataset as wds

    samples = list(wds.WebDataset(_pattern(wds_episodes), shardshuffle=False).decode("rgb8"))
    assert len(samples) == 2
    for s in samples:
        images = [k for k in s if k.startswith("front.")]
        assert len(images) == s["meta.json"]["num_steps"] == len(s["steps.npz"]["action"])


def test_check_strict_passes(wds_steps: Path, wds_episodes: Path) -> None:
    from robokit.cli import main

    assert main(["check", "--strict", str(wds_steps), str(wds_episodes)]) == 0  # webdataset itself validated them
