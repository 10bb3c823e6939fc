from __future__ import annotations

import json
import shutil
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import robokit
from robokit import frames
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.rlds import features as ft
from robokit.converters.rlds.example import decode_example, encode_example
from robokit.converters.rlds.features import leaves
from robokit.converters.rlds.records import iter_records, write_record
from robokit.converters.rlds.writer import val_indices
from robokit.errors import ConversionError, OptionError, SourceError
from robokit.timeline import Episode
from robokit.timeline.images import encode_image

from .conftest import CHANNELS

MakeEpisode = Callable[..., Episode]

STEP_KEYS = {"steps/observation/front", "steps/observation/wrist", "steps/observation/state",
             "steps/observation/tf_tool0", "steps/action", "steps/reward", "steps/discount", "steps/is_first",
             "steps/is_last", "steps/is_terminal", "steps/language_instruction"}


def test_layout_names_and_exact_split_info(rlds_out: Path, rlds_root: Path) -> None:
    info = json.loads((rlds_root / "dataset_info.json").read_text())
    assert info["name"] == "sample_arm" and info["version"] == "1.0.0" and info["fileFormat"] == "tfrecord"
    assert [s["name"] for s in info["splits"]] == ["train", "val"]
    for split in info["splits"]:
        n = len(split["shardLengths"])
        payload = 0
        for i, count in enumerate(split["shardLengths"]):
            records = list(iter_records(rlds_root / f"sample_arm-{split['name']}.tfrecord-{i:05d}-of-{n:05d}"))
            assert len(records) == int(count)
            payload += sum(len(r) for r in records)
        assert payload == int(split["numBytes"])
    assert sorted(p.name for p in rlds_root.iterdir() if p.suffix == ".json") == ["dataset_info.json", "features.json",
                                                                                         "metadata.json"]
    assert not list(rlds_out.parent.glob(".rlds.partial-*")) and not list(rlds_root.glob(".*"))


def test_features_follow_the_rlds_builder_schema(rlds_root: Path) -> None:
    found = leaves(json.loads((rlds_root / "features.json").read_text()))
    assert set(found) >= STEP_KEYS
    assert {"episode_metadata/file_path", "episode_metadata/source", "episode_metadata/segment",
            "episode_metadata/segment_version"} <= set(found)
    assert found["steps/observation/front"].shape == (120, 160, 3) and found["steps/observation/front"].format == "png"
    assert found["steps/observation/wrist"].format == "jpeg"  # recorded JPEG kept
    assert found["steps/action"].shape == (7,) and found["steps/action"].dtype == "float32"
    assert found["steps/is_first"].dtype == "bool" and found["steps/is_first"].sequence_rank == 1


def test_every_record_has_flags_once_and_traceability(rlds_root: Path) -> None:
    episodes = 0
    for shard in sorted(rlds_root.glob("*.tfrecord-*")):
        for record in iter_records(shard):
            values = decode_example(record)
            first, last = values["steps/is_first"], values["steps/is_last"]
            assert isinstance(first, np.ndarray) and isinstance(last, np.ndarray)
            assert list(np.flatnonzero(first)) == [0] and list(np.flatnonzero(last)) == [len(last) - 1]
            assert values["episode_metadata/source"] == values["episode_metadata/file_path"]
            assert values["episode_metadata/segment_version"][0].startswith(b"s2:")
            episodes += 1
    assert episodes == 2


def test_check_passes(rlds_out: Path) -> None:
    assert get_converter("rlds").check(rlds_out) == []


def test_round_trip_equals_the_source(rlds_out: Path, sample_dir: Path) -> None:
    episodes = {ep.id: ep for ep in robokit.open(rlds_out)}
    assert sorted(episodes) == ["episode_000", "episode_001"]
    for src in robokit.open(sorted(sample_dir.iterdir())):
        ep, aligned = episodes[src.id], robokit.resample(src, 15, channels=CHANNELS)
        state = ep["joints/position"]
        assert np.array_equal(state.timestamps, aligned["joints/position"].timestamps)
        assert np.array_equal(state.values, aligned["joints/position"].values.astype(np.float32))
        assert state.names == aligned["joints/position"].names
        assert ep.tasks == src.tasks
        pose = frames.convert_pose_stream(aligned["tf/tool0"], "rayform")
        assert np.allclose(ep["tf/tool0"].quaternion, pose.quaternion, atol=1e-6)
        for i in (0, len(state) // 2, len(state) - 1):
            assert np.array_equal(ep["front/rgb"].frame(i).array(), aligned["front/rgb"].frame(i).array())  # PNG
            assert ep["wrist/rgb"].frame(i).data == aligned["wrist/rgb"].frame(i).data  # JPEG passed through


def test_rlds_to_lerobot(rlds_out: Path, tmp_path: Path) -> None:
    episodes = robokit.open(rlds_out)
    lerobot = get_converter("lerobot")
    lerobot.write(episodes, tmp_path, WriterOptions(action="joints/position_delta", extra={"preset": "13"}))
    assert lerobot.check(tmp_path / "lerobot") == []
    info = json.loads((tmp_path / "lerobot" / "meta" / "info.json").read_text())
    assert info["total_episodes"] == 2 and info["fps"] == 15


def test_shards_hold_whole_episodes_under_the_target(sample_dir: Path, tmp_path: Path) -> None:
    eps = robokit.open(sorted(sample_dir.iterdir()))
    options = WriterOptions(fps=15, action="joints/position_delta", extra={"rlds_shard_mb": 0.5})
    get_converter("rlds").write(eps + eps, tmp_path, options)
    shards = sorted((tmp_path / "rlds" / "robokit" / "1.0.0").glob("*.tfrecord-*"))
    counts = [sum(1 for _ in iter_records(s)) for s in shards]
    assert sum(counts) == 4 and len(shards) == 2 and all(s.stat().st_size <= 500_000 for s in shards)
    assert shards[-1].name.endswith("00001-of-00002")


def test_val_split_is_spread_and_validated() -> None:
    assert val_indices(10, 0.2) == {2, 7} and val_indices(3, 0.0) == set() and val_indices(1, 0.5) == set()
    assert len(val_indices(5, 0.99)) == 4
    with pytest.raises(OptionError, match="split"):
        val_indices(10, 1.0)


@pytest.mark.parametrize("extra", [{"dataset_name": "Bad-Name"}, {"rlds_version": "1.0"}, {"rlds_shard_mb": 4096},
                                   {"image_format": "gif"}])
def test_bad_options(make_episode: MakeEpisode, tmp_path: Path, extra: dict[str, object]) -> None:
    with pytest.raises(OptionError):
        get_converter("rlds").write([make_episode()], tmp_path, WriterOptions(extra=extra))


def test_image_size_change_is_a_clear_error_or_resized(make_episode: MakeEpisode, tmp_path: Path) -> None:
    episode = make_episode(shapes=[(8, 6)] * 5 + [(10, 6)] * 5)
    with pytest.raises(ConversionError, match=r"cam/rgb: frame 5 is 10x6x3.*image_size"):
        get_converter("rlds").write([episode], tmp_path, WriterOptions())
    assert not (tmp_path / "rlds").exists() and not list(tmp_path.iterdir())
    get_converter("rlds").write([episode], tmp_path, WriterOptions(image_size=(4, 4)))
    (ep,) = robokit.open(tmp_path / "rlds")
    assert ep["cam/rgb"].frame(9).array().shape == (4, 4, 3)


def test_interrupted_write_leaves_nothing(make_episode: MakeEpisode, tmp_path: Path) -> None:
    episodes = [make_episode("a"), make_episode("b", fail_after=3)]
    with pytest.raises(OSError, match="vanished"):
        get_converter("rlds").write(episodes, tmp_path, WriterOptions(extra={"rlds_shard_mb": 0.0001}))
    assert list(tmp_path.iterdir()) == []


def test_reads_tfds_style_datasets_with_their_own_keys(tmp_path: Path) -> None:
    """An Open X-Embodiment-like layout: other image keys, dict actions, zlib tensors, instruction in observation."""
    root = tmp_path / "fractal_like" / "0.1.0"
    root.mkdir(parents=True)
    step = ft.features_dict({
        "observation": ft.features_dict({"image": ft.image((4, 6, 3), "uint8", "jpeg"),
                                         "natural_language_instruction": ft.text(),
                                         "joint_pos": {**ft.tensor((2,), "float32"),
                                                       "tensor": {"dtype": "float32", "encoding": "zlib",
                                                                  "shape": {"dimensions": ["2"]}}}}),
        "action": ft.features_dict({"world_vector": ft.tensor((3,), "float32"),
                                    "gripper_closedness_action": ft.tensor((1,), "float32")}),
        "is_first": ft.tensor((), "bool"), "is_last": ft.tensor((), "bool"), "reward": ft.tensor((), "float32"),
    })
    (root / "features.json").write_text(json.dumps(ft.features_dict({"steps": ft.dataset(step)})))
    n = 3
    img = encode_image(np.full((4, 6, 3), 90, np.uint8), "jpeg")
    values = {"steps/observation/image": [img] * n,
              "steps/observation/natural_language_instruction": [b"pick can"] * n,
              "steps/observation/joint_pos": [zlib.compress(np.array([i, -i], "<f4").tobytes()) for i in range(n)],
              "steps/action/world_vector": np.arange(9, dtype=np.float32),
              "steps/action/gripper_closedness_action": np.ones(3, np.float32),
              "steps/is_first": np.array([1, 0, 0]), "steps/is_last": np.array([0, 0, 1]),
              "steps/reward": np.zeros(3, np.float32)}
    chunks, size = encode_example(values)
    with (root / "fractal_like-train.tfrecord-00000-of-00001").open("wb") as f:
        write_record(f, chunks, size)
    (root / "dataset_info.json").write_text(json.dumps({"name": "fractal_like", "version": "0.1.0", "splits": [
        {"name": "train", "shardLengths": ["1"], "numBytes": str(size)}]}))
    (ep,) = robokit.open(tmp_path / "fractal_like")
    assert ep.tasks == ("pick can",) and any("10 Hz" in w or "0.1 s" in w for w in ep.warnings)
    assert set(ep.streams) >= {"image/rgb", "joint_pos", "action/world_vector", "task"}
    assert np.array_equal(ep["joint_pos"].values[:, 1], [0, -1, -2])
    assert ep["action/world_vector"].values.shape == (3, 3)
    assert ep["image/rgb"].frame(2).format == "jpeg" and ep["image/rgb"].width == 6


def test_check_reports_wrong_shard_lengths_and_corruption(rlds_out: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "rlds"
    shutil.copytree(rlds_out, copy)
    info_path = copy / "sample_arm" / "1.0.0" / "dataset_info.json"
    info = json.loads(info_path.read_text())
    info["splits"][0]["shardLengths"][0] = "2"
    info_path.write_text(json.dumps(info))
    shard = next((copy / "sample_arm" / "1.0.0").glob("*-val.tfrecord-*"))
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    problems = get_converter("rlds").check(copy)
    assert any("shardLengths[0] says 2" in p for p in problems)
    assert any("CRC mismatch" in p for p in problems)


@pytest.mark.parametrize("template", ["../../{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}",
                                      "{DATASET.__class__}-{SHARD_X_OF_Y}", "/tmp/{SHARD_X_OF_Y}"])
def test_reader_refuses_shard_templates_leaving_the_dataset(rlds_root: Path, tmp_path: Path, template: str) -> None:
    root = tmp_path / "1.0.0"
    shutil.copytree(rlds_root, root)
    info = json.loads((root / "dataset_info.json").read_text())
    for split in info["splits"]:
        split["filepathTemplate"] = template
    (root / "dataset_info.json").write_text(json.dumps(info))
    with pytest.raises(SourceError, match="filepathTemplate"):
        robokit.open(root)
