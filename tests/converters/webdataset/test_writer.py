from __future__ import annotations

import io
import json
import re
import tarfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import robokit
from robokit import frames
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.webdataset import writer
from robokit.converters.webdataset.layout import closing_size, member_size
from robokit.errors import ConversionError, OptionError
from robokit.timeline import Episode

from .conftest import CHANNELS, SMALL, write

MakeEpisode = Callable[..., Episode]


def _members(shard: Path) -> list[tarfile.TarInfo]:
    with tarfile.open(shard) as tar:
        return tar.getmembers()


def _read(shard: Path) -> dict[str, bytes]:
    with tarfile.open(shard) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar}  # type: ignore[union-attr]


def test_shards_index_and_exact_sizes(wds_steps: Path, sample_dir: Path) -> None:
    steps = sum(len(robokit.resample(s, 15, channels=CHANNELS)["joints/position"])
                for s in robokit.open(sorted(sample_dir.iterdir())))
    dataset = json.loads((wds_steps / "dataset.json").read_text())
    index = json.loads((wds_steps / "sample.shardindex.json").read_text())
    shards = sorted(wds_steps.glob("*.tar"))
    assert [s.name for s in shards] == [f"sample-{i:06d}.tar" for i in range(len(shards))] and len(shards) == 2
    assert dataset["shards"] == "sample-{000000..000001}.tar" and dataset["num_samples"] == steps
    assert index["__kind__"] == "wids-shard-index-v1" and index["wids_version"] == 1
    for entry, shard in zip(index["shardlist"], shards, strict=True):
        members = _members(shard)
        content = sum(member_size(m.size) for m in members)
        assert shard.stat().st_size == entry["filesize"] == content + closing_size(content)
        assert entry["nsamples"] == len({m.name.split(".")[0] for m in members})
        assert shard.stat().st_size <= 500_000
    assert dataset["keys"]["front.png"]["shape"] == [120, 160, 3] and dataset["keys"]["wrist.jpg"]["format"] == "jpeg"
    assert dataset["keys"]["tf_tool0.npy"]["names"] == ["x", "y", "z", "qw", "qx", "qy", "qz"]  # wxyz by default


def test_members_are_deterministic_and_well_formed(wds_steps: Path, sample_dir: Path, tmp_path: Path) -> None:
    shard = wds_steps / "sample-000000.tar"
    names = [m.name for m in _members(shard)]
    for m in _members(shard):
        assert m.isreg() and not m.pax_headers and m.mtime == 0 and m.uid == m.gid == 0 and m.mode == 0o644
    keys = list(dict.fromkeys(n.split(".")[0] for n in names))
    assert keys[:2] == ["episode_000_000000", "episode_000_000001"]
    assert all(re.fullmatch(r"[A-Za-z0-9_\-]+_\d{6}", k) for k in keys)
    assert names[:6] == [f"episode_000_000000.{e}" for e in
                         ("action.npy", "front.png", "meta.json", "state.npy", "tf_tool0.npy", "wrist.jpg")]
    again = write(sample_dir, tmp_path)
    assert all((again / s.name).read_bytes() == s.read_bytes() for s in wds_steps.glob("*.tar"))


def test_vectors_made_in_blocks_give_the_same_shards(wds_steps: Path, sample_dir: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer, "STEP_BLOCK", 7)  # episodes of 15-odd steps: blocks end inside every episode
    blocked = write(sample_dir, tmp_path)
    shards = sorted(wds_steps.glob("*.tar"))
    assert shards and all((blocked / s.name).read_bytes() == s.read_bytes() for s in shards)


def test_check_passes(wds_steps: Path, wds_episodes: Path) -> None:
    assert SMALL.check(wds_steps) == [] and SMALL.check(wds_episodes) == []


def test_step_samples_equal_the_source(wds_steps: Path, sample_dir: Path) -> None:
    members = {**_read(wds_steps / "sample-000000.tar"), **_read(wds_steps / "sample-000001.tar")}
    for src in robokit.open(sorted(sample_dir.iterdir())):
        aligned = robokit.resample(src, 15, channels=CHANNELS)
        pose = frames.convert_pose_stream(aligned["tf/tool0"], "rayform")  # type: ignore[arg-type]
        n = len(aligned["joints/position"])
        for t in (0, n // 2, n - 1):
            key = f"{src.id}_{t:06d}"
            state = np.load(io.BytesIO(members[f"{key}.state.npy"]))
            assert state.dtype == np.float32
            assert np.array_equal(state, aligned["joints/position"].values[t].astype(np.float32))  # type: ignore[attr-defined]
            wxyz = pose.quaternion[t][[3, 0, 1, 2]]  # the default order
            assert np.allclose(np.load(io.BytesIO(members[f"{key}.tf_tool0.npy"]))[3:], wxyz, atol=1e-6)
            front = np.asarray(__import__("PIL.Image").Image.open(io.BytesIO(members[f"{key}.front.png"])))
            assert np.array_equal(front, aligned["front/rgb"].frame(t).array())  # type: ignore[attr-defined]
            assert members[f"{key}.wrist.jpg"] == aligned["wrist/rgb"].frame(t).data  # type: ignore[attr-defined]
            meta = json.loads(members[f"{key}.meta.json"])
            assert (meta["step"], meta["num_steps"], meta["is_first"], meta["is_last"]) == (t, n, t == 0, t == n - 1)
            assert meta["task"] == src.tasks[0] and meta["source"] == src.meta.source_uri
            assert meta["timestamp_ns"] == int(aligned["joints/position"].timestamps[t])


def test_episode_samples(wds_episodes: Path, sample_dir: Path) -> None:
    members = _read(wds_episodes / "sample-000000.tar")
    (src,) = robokit.open(sample_dir / "episode_000")
    aligned = robokit.resample(src, 15, channels=CHANNELS)
    n = len(aligned["joints/position"])
    steps = np.load(io.BytesIO(members["episode_000.steps.npz"]))
    assert steps["state"].shape == (n, 7) and list(np.flatnonzero(steps["is_last"])) == [n - 1]
    assert np.array_equal(steps["timestamp_ns"], aligned["joints/position"].timestamps)
    assert sum(name.startswith("episode_000.front.") for name in members) == n
    assert json.loads(members["episode_000.meta.json"])["num_steps"] == n


def test_shard_size_option_is_bounded(make_episode: MakeEpisode, tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="wds_shard_mb 64: expected a number from 256 to 1024"):
        get_converter("webdataset").write([make_episode()], tmp_path, WriterOptions(extra={"wds_shard_mb": 64}))
    with pytest.raises(OptionError, match="wds_samples"):
        SMALL.write([make_episode()], tmp_path, WriterOptions(extra={"wds_samples": "frame"}))


def test_episodes_never_split_and_big_ones_get_their_own_shard(make_episode: MakeEpisode, tmp_path: Path) -> None:
    episodes = [make_episode(f"ep.{i}", n=4 + 6 * i) for i in range(4)]
    SMALL.write(episodes, tmp_path, WriterOptions(extra={"wds_shard_mb": 0.02}))
    root = tmp_path / "webdataset"
    assert SMALL.check(root) == []
    for shard in root.glob("*.tar"):
        episodes_in = {m.name.rsplit("_", 1)[0] for m in _members(shard)}
        assert len(episodes_in) == 1 or shard.stat().st_size <= 20_000
    assert {m.name.split(".")[0].rsplit("_", 1)[0] for s in root.glob("*.tar") for m in _members(s)} == {
        "ep_0", "ep_1", "ep_2", "ep_3"}  # dots replaced: keys end at the first dot


def test_image_size_change_and_interruption(make_episode: MakeEpisode, tmp_path: Path) -> None:
    with pytest.raises(ConversionError, match="frame 3 is 8x9x3"):
        SMALL.write([make_episode(shapes=[(8, 6)] * 3 + [(8, 9)] * 7)], tmp_path, WriterOptions())
    with pytest.raises(OSError, match="vanished"):
        SMALL.write([make_episode("a"), make_episode("b", fail_after=2)], tmp_path,
                    WriterOptions(extra={"wds_shard_mb": 0.01}))
    assert list(tmp_path.iterdir()) == []


def test_check_reports_a_wrong_index(wds_steps: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "webdataset"
    shutil.copytree(wds_steps, copy)
    index_path = copy / "sample.shardindex.json"
    index = json.loads(index_path.read_text())
    index["shardlist"][0]["nsamples"] += 1
    index_path.write_text(json.dumps(index))
    assert any("the index says" in p for p in SMALL.check(copy))
