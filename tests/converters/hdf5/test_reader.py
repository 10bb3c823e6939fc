"""HDF5 readers: robomimic (masks, env_args), LIBERO (problem_info), ALOHA raw and JPEG-compressed with padding,
conversion to LeRobot / RLDS / WebDataset with values compared to the arrays, malformed and unknown files."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

import robokit
from robokit.cli import main
from robokit.converters.hdf5.aloha import JOINT_NAMES
from robokit.converters.hdf5.reader import HDF5_READER
from robokit.errors import OptionError, SourceError
from robokit.timeline import ImageStream, NumericStream, PoseStream

H, W = 6, 8


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def write_robomimic(path: Path, demos: dict[str, int], env_args: Any = None, image_key: str = "agentview_image",
                    seed: int = 0) -> dict[str, dict[str, np.ndarray]]:
    """A robomimic file; returns demo → dataset path → array written."""
    rng = _rng(seed)
    written: dict[str, dict[str, np.ndarray]] = {}
    with h5py.File(path, "w") as f:
        data = f.create_group("data")
        if env_args is not None:
            data.attrs["env_args"] = env_args if isinstance(env_args, str) else json.dumps(env_args)
        for demo, n in demos.items():
            arrays = {
                "actions": rng.normal(size=(n, 7)), "rewards": rng.normal(size=n), "dones": np.zeros(n),
                "states": rng.normal(size=(n, 12)),
                "obs/robot0_joint_pos": rng.normal(size=(n, 7)), "obs/robot0_joint_vel": rng.normal(size=(n, 7)),
                "obs/robot0_eef_pos": rng.normal(size=(n, 3)),
                "obs/robot0_eef_quat": np.tile([0.0, 0.0, np.sin(0.3), np.cos(0.3)], (n, 1)),
                "obs/robot0_gripper_qpos": rng.normal(size=(n, 2)), "obs/object": rng.normal(size=(n, 10)),
                f"obs/{image_key}": rng.integers(0, 255, (n, H, W, 3), dtype=np.uint8),
                "obs/agentview_depth": rng.random((n, H, W, 1)).astype(np.float32),
                "next_obs/robot0_joint_pos": rng.normal(size=(n, 7)),
            }
            group = data.create_group(demo)
            group.attrs["num_samples"] = n
            for key, value in arrays.items():
                group.create_dataset(key, data=value, chunks=(1, *value.shape[1:]) if value.ndim == 4 else None)
            written[demo] = arrays
        data.attrs["total"] = sum(demos.values())
    return written


def write_aloha(path: Path, n: int, compress: bool, cams: tuple[str, ...] = ("cam_high", "cam_left_wrist"),
                seed: int = 0, action_rows: int | None = None) -> dict[str, Any]:
    """An ALOHA/ACT episode file; returns what was written (images as arrays, or JPEG bytes when compressed)."""
    rng = _rng(seed)
    out: dict[str, Any] = {"qpos": rng.normal(size=(n, 14)), "qvel": rng.normal(size=(n, 14)),
                           "effort": rng.normal(size=(n, 14)), "action": rng.normal(size=(action_rows or n, 14))}
    with h5py.File(path, "w") as f:
        f.attrs["sim"] = True
        f.attrs["compress"] = compress
        obs = f.create_group("observations")
        for key in ("qpos", "qvel", "effort"):
            obs[key] = out[key]
        f["action"] = out["action"]
        images = obs.create_group("images")
        lengths = []
        for cam in cams:
            pixels = rng.integers(0, 255, (n, H, W, 3), dtype=np.uint8)
            if compress:
                jpegs = [_jpeg(p) for p in pixels]
                padded = np.zeros((n, max(map(len, jpegs)) + 13), np.uint8)  # ACT pads every row to the longest
                for i, j in enumerate(jpegs):
                    padded[i, : len(j)] = np.frombuffer(j, np.uint8)
                images.create_dataset(cam, data=padded, chunks=(1, padded.shape[1]))
                out[cam] = jpegs
                lengths.append([len(j) for j in jpegs])
            else:
                images.create_dataset(cam, data=pixels, chunks=(1, H, W, 3))
                out[cam] = pixels
        if compress:
            f["compress_len"] = np.asarray(lengths, dtype=np.float32)
    return out


def _jpeg(pixels: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def _values(stream: object) -> np.ndarray:
    assert isinstance(stream, NumericStream)
    return stream.values


# ---------------------------------------------------------------- robomimic / LIBERO


def test_robomimic_demos_in_numeric_order_with_channels_rate_and_splits(tmp_path: Path) -> None:
    path = tmp_path / "lift.hdf5"
    written = write_robomimic(path, {"demo_10": 3, "demo_2": 4, "demo_1": 5},
                              env_args={"env_name": "Lift", "env_kwargs": {"control_freq": 10, "robots": ["Panda"]}})
    with h5py.File(path, "a") as f:
        f["mask/train"] = np.array([b"demo_1", b"demo_10"])
        f["mask/valid"] = np.array([b"demo_2"])
        f["mask/20_percent"] = np.array([b"demo_2"])
    assert HDF5_READER.sniff(path)
    episodes = robokit.open(path)
    assert [ep.id for ep in episodes] == ["lift_demo_1", "lift_demo_2", "lift_demo_10"]
    assert [ep.meta.tags["split"] for ep in episodes] == ["train", "valid", "train"]
    assert episodes[1].meta.tags["filters"] == "20_percent,valid" and episodes[0].meta.tags["env"] == "Lift"
    assert episodes[0].meta.robot_type == "Panda" and episodes[0].meta.source_format == "robomimic"
    ep, arrays = episodes[1], written["demo_2"]
    assert {"joints/position", "joints/velocity", "gripper/position", "eef/pose", "agentview/rgb", "agentview/depth",
            "action", "reward", "done", "states", "obs/object"} == set(ep.streams)
    for channel, key in (("joints/position", "obs/robot0_joint_pos"), ("joints/velocity", "obs/robot0_joint_vel"),
                         ("gripper/position", "obs/robot0_gripper_qpos"), ("action", "actions"),
                         ("obs/object", "obs/object"), ("states", "states")):
        assert np.array_equal(_values(ep[channel]), arrays[key]), channel
    assert np.array_equal(ep["joints/position"].timestamps, np.arange(4) * 100_000_000)  # 10 Hz from 0
    pose = ep["eef/pose"]
    assert isinstance(pose, PoseStream)
    assert np.allclose(pose.translation, arrays["obs/robot0_eef_pos"])
    assert np.allclose(pose.quaternion, arrays["obs/robot0_eef_quat"])  # xyzw kept
    cam = ep["agentview/rgb"]
    assert isinstance(cam, ImageStream) and (cam.width, cam.height, cam.encoding) == (W, H, "rgb8")
    for i, frame in enumerate(cam.frames()):
        assert np.array_equal(frame.array(), arrays["obs/agentview_image"][i])
    depth = ep["agentview/depth"]  # float: metres, with a warning that [0, 1] may be robosuite's normalized depth
    assert isinstance(depth, ImageStream) and (depth.width, depth.height, depth.encoding) == (W, H, "32FC1")
    for i, frame in enumerate(depth.frames()):
        assert np.array_equal(frame.array(), arrays["obs/agentview_depth"][i, :, :, 0])
    assert any("within [0, 1] read as metres" in w for w in ep.warnings)
    skipped = {s.topic: s.reason for s in ep.skipped}
    assert "/data/demo_2/next_obs" in skipped and "/data/demo_2/obs/agentview_depth" not in skipped
    assert any("index / rate" in w for w in ep.warnings) and ep.complete


def test_robomimic_uint16_depth_is_millimetres_and_odd_depth_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "depth.hdf5"
    write_robomimic(path, {"demo_0": 3})
    mm = _rng(1).integers(0, 9000, (3, H, W), dtype=np.uint16)
    with h5py.File(path, "a") as f:
        del f["data/demo_0/obs/agentview_depth"]
        f["data/demo_0/obs/agentview_depth"] = mm
        f["data/demo_0/obs/wrist_depth"] = np.zeros((3, H, W, 3), dtype=np.uint8)
    ep = robokit.open(path)[0]
    depth = ep["agentview/depth"]
    assert isinstance(depth, ImageStream) and depth.encoding == "16UC1" and depth.is_depth
    assert all(np.array_equal(f.array(), mm[i]) for i, f in enumerate(depth.frames()))
    assert "wrist/depth" not in ep.streams
    assert "expected (T, H, W[, 1])" in {s.topic: s.reason for s in ep.skipped}["/data/demo_0/obs/wrist_depth"]


def test_robomimic_without_env_args_is_20_hz_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "demo.hdf5"
    write_robomimic(path, {"demo_0": 3})
    ep = robokit.open(path)[0]
    assert ep["action"].timestamps[1] == 50_000_000
    assert any("20 Hz assumed" in w for w in ep.warnings)


def test_libero_task_joint_states_and_rgb_cameras(tmp_path: Path) -> None:
    path = tmp_path / "KITCHEN_SCENE1_put_the_black_bowl_demo.hdf5"
    rng = _rng(3)
    with h5py.File(path, "w") as f:
        data = f.create_group("data")
        data.attrs["problem_info"] = json.dumps({"problem_name": "libero_kitchen_tabletop_manipulation",
                                                 "language_instruction": "put the black bowl on the plate"})
        data.attrs["env_args"] = json.dumps({"env_name": "x", "env_kwargs": {"control_freq": 20}})
        for d in range(2):
            g = data.create_group(f"demo_{d}")
            g["actions"] = rng.normal(size=(4, 7))
            g["obs/joint_states"] = rng.normal(size=(4, 7))
            g["obs/gripper_states"] = rng.normal(size=(4, 2))
            g["obs/ee_pos"] = rng.normal(size=(4, 3))
            g["obs/agentview_rgb"] = rng.integers(0, 255, (4, H, W, 3), dtype=np.uint8)
            g["obs/eye_in_hand_rgb"] = rng.integers(0, 255, (4, H, W, 3), dtype=np.uint8)
    episodes = robokit.open(path)
    assert len(episodes) == 2 and episodes[0].tasks == ("put the black bowl on the plate",)
    ep = episodes[0]
    assert ep.meta.source_format == "libero"
    assert {"joints/position", "gripper/position", "obs/ee_pos", "agentview/rgb", "eye_in_hand/rgb",
            "action"} == set(ep.streams)
    with h5py.File(path) as f:
        assert np.array_equal(_values(ep["joints/position"]), f["data/demo_0/obs/joint_states"][()])


# ---------------------------------------------------------------- ALOHA


def test_aloha_folder_raw_and_jpeg_compressed_episodes(tmp_path: Path) -> None:
    folder = tmp_path / "aloha"
    folder.mkdir()
    raw = write_aloha(folder / "episode_10.hdf5", 4, compress=False, seed=1)
    packed = write_aloha(folder / "episode_2.hdf5", 5, compress=True, seed=2)
    (folder / "notes.txt").write_text("not an episode")
    assert HDF5_READER.sniff(folder)
    episodes = robokit.open(folder)
    assert [ep.id for ep in episodes] == ["episode_2", "episode_10"]
    assert episodes[0].meta.tags == {"sim": "true", "compress": "true"}
    for ep, src in zip(episodes, (packed, raw), strict=True):
        assert {"joints/position", "joints/velocity", "joints/effort", "action", "cam_high/rgb",
                "cam_left_wrist/rgb"} == set(ep.streams)
        for channel, key in (("joints/position", "qpos"), ("joints/velocity", "qvel"), ("joints/effort", "effort"),
                             ("action", "action")):
            stream = ep[channel]
            assert np.array_equal(_values(stream), src[key]) and isinstance(stream, NumericStream)
            assert stream.names == JOINT_NAMES
        assert ep["action"].timestamps[1] == 20_000_000  # 50 Hz
    jpeg_cam = episodes[0]["cam_high/rgb"]
    assert isinstance(jpeg_cam, ImageStream) and jpeg_cam.format == "jpeg"
    assert (jpeg_cam.width, jpeg_cam.height) == (W, H)
    assert [f.data for f in jpeg_cam.frames()] == packed["cam_high"]  # padding cut, bytes passed through
    raw_cam = episodes[1]["cam_left_wrist/rgb"]
    assert isinstance(raw_cam, ImageStream)
    for i, frame in zip((3, 0, 3), raw_cam.frames([3, 0, 3]), strict=True):  # any order, repeats allowed
        assert np.array_equal(frame.array(), raw["cam_left_wrist"][i])


def test_aloha_mismatched_lengths_truncate_with_a_warning_and_a_loss(tmp_path: Path) -> None:
    path = tmp_path / "episode_0.hdf5"
    write_aloha(path, 5, compress=False, cams=("cam_high",), action_rows=7)
    ep = robokit.open(path)[0]
    assert len(ep["action"]) == 5 and len(ep["cam_high/rgb"]) == 5
    assert any("truncated to the shortest" in w and "action 7" in w for w in ep.warnings)
    assert [(x.topic, x.messages) for x in ep.losses] == [("/action", 2)]


# ---------------------------------------------------------------- conversion


def _table(root: Path) -> pa.Table:
    return pa.concat_tables([pq.read_table(p) for p in sorted((root / "data").rglob("*.parquet"))])


def _matrix(table: pa.Table, key: str) -> np.ndarray:
    col = table.column(key).combine_chunks()
    return np.asarray(col.flatten().to_numpy(zero_copy_only=False)).reshape(len(col), -1)


@pytest.mark.parametrize("compress", [False, True])
def test_convert_aloha_to_lerobot_rlds_webdataset_keeps_the_values(tmp_path: Path, compress: bool,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "aloha"
    folder.mkdir()
    sources = [write_aloha(folder / f"episode_{i}.hdf5", 6, compress=compress, seed=i) for i in range(2)]
    out = tmp_path / "out"
    formats = ("lerobot", "rlds", "webdataset")
    code = main(["convert", str(folder), *(a for f in formats for a in ("--to", f)), "--out", str(out),
                 "--fps", "50", "--no-cache", "--workers", "1"])
    assert code == 0, capsys.readouterr()
    table = _table(out / "lerobot")
    assert np.allclose(_matrix(table, "observation.state"), np.vstack([s["qpos"] for s in sources]), atol=1e-6)
    assert np.allclose(_matrix(table, "action"), np.vstack([s["action"] for s in sources]), atol=1e-6)
    info = json.loads((out / "lerobot" / "meta" / "info.json").read_text())
    assert info["features"]["observation.state"]["names"] == list(JOINT_NAMES)
    assert {"observation.images.cam_high", "observation.images.cam_left_wrist"} <= set(info["features"])
    rlds = robokit.open(out / "rlds")
    assert len(rlds) == 2
    for ep, src in zip(rlds, sources, strict=True):
        assert np.allclose(_values(ep["action"]), src["action"], atol=1e-6)
        assert np.allclose(_values(ep["joints/position"]), src["qpos"], atol=1e-6)
    states = []
    for shard in sorted((out / "webdataset").glob("*.tar")):
        with tarfile.open(shard) as tar:
            members = sorted((m for m in tar.getmembers() if m.name.endswith(".state.npy")), key=lambda m: m.name)
            states += [np.load(io.BytesIO(tar.extractfile(m).read())) for m in members]  # type: ignore[union-attr]
    assert np.allclose(np.vstack(states), np.vstack([s["qpos"] for s in sources]), atol=1e-6)


def test_convert_robomimic_to_lerobot_keeps_actions_and_joints(tmp_path: Path) -> None:
    path = tmp_path / "can.hdf5"
    written = write_robomimic(path, {"demo_0": 4, "demo_1": 3}, env_args={"env_kwargs": {"control_freq": 20}})
    out = tmp_path / "out"
    assert main(["convert", str(path), "--to", "lerobot", "--out", str(out), "--fps", "20", "--no-cache",
                 "--workers", "1"]) == 0
    table = _table(out / "lerobot")
    demos = [written["demo_0"], written["demo_1"]]
    assert np.allclose(_matrix(table, "action"), np.vstack([d["actions"] for d in demos]), atol=1e-6)
    assert np.allclose(_matrix(table, "observation.state"), np.vstack([d["obs/robot0_joint_pos"] for d in demos]),
                       atol=1e-6)


# ---------------------------------------------------------------- malformed and unknown


def test_unknown_layout_lists_its_datasets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mystery.h5"
    with h5py.File(path, "w") as f:
        f["sensors/imu"] = np.zeros((10, 6), np.float32)
        f["labels"] = np.zeros(3, np.int64)
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err
    assert "unknown layout" in err and "/sensors/imu (10, 6) float32" in err and "/labels (3,) int64" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("problem", ["bad_json", "bad_rate", "bad_image", "bad_quat", "bad_mask"])
def test_malformed_robomimic_is_a_source_error_naming_file_and_dataset(tmp_path: Path, problem: str) -> None:
    path = tmp_path / "bad.hdf5"
    write_robomimic(path, {"demo_0": 3}, env_args="{not json" if problem == "bad_json" else
                    {"env_kwargs": {"control_freq": "fast" if problem == "bad_rate" else 20}})
    with h5py.File(path, "a") as f:
        if problem == "bad_image":
            del f["data/demo_0/obs/agentview_image"]
            f["data/demo_0/obs/agentview_image"] = np.zeros((3, 4), np.float32)
        if problem == "bad_quat":
            del f["data/demo_0/obs/robot0_eef_quat"]
            f["data/demo_0/obs/robot0_eef_quat"] = np.zeros((3, 3))
        if problem == "bad_mask":
            f["mask/train"] = np.zeros(2)
    expected = {"bad_json": "env_args", "bad_rate": "control_freq", "bad_image": "agentview_image",
                "bad_quat": "robot0_eef_quat", "bad_mask": "/mask/train"}[problem]
    with pytest.raises(SourceError, match=expected) as info:
        _ = robokit.open(path)[0].streams
    assert str(path) in str(info.value)


def test_truncated_file_and_bad_jpeg_are_source_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "episode_0.hdf5"
    write_aloha(path, 4, compress=False)
    cut = tmp_path / "episode_1.hdf5"
    cut.write_bytes(path.read_bytes()[:2000])
    assert main(["info", str(cut)]) == 2
    assert "not a readable HDF5 file" in capsys.readouterr().err
    packed = tmp_path / "episode_2.hdf5"
    write_aloha(packed, 3, compress=True, cams=("cam_high",))
    with h5py.File(packed, "a") as f:
        f["observations/images/cam_high"][0, :40] = 7  # a first frame that is no JPEG any more
    with pytest.raises(SourceError, match=r"cam_high.*frame 0"):
        _ = robokit.open(packed)[0].streams
    # in a folder, an unreadable file is skipped with a warning that reaches export.json; the others convert
    packed.unlink()
    episodes = robokit.open(tmp_path)
    assert [ep.id for ep in episodes] == ["episode_0"] and len(episodes[0]["joints/position"]) == 4
    assert any("episode_1.hdf5 skipped" in w and "not a readable HDF5 file" in w for w in episodes[0].warnings)
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path), "--to", "lerobot", "--out", str(out), "--fps", "50", "--no-cache",
                 "--workers", "1"]) == 0
    report = json.loads((out / "export.json").read_text())
    assert any("episode_1.hdf5 skipped" in w for w in report["items"][0]["warnings"])
    path.unlink()
    with pytest.raises(SourceError, match="none of its 1 HDF5 file"):
        robokit.open(tmp_path)


def test_robomimic_valid_mask_becomes_the_rlds_val_split(tmp_path: Path) -> None:
    path = tmp_path / "lift.hdf5"
    write_robomimic(path, {"demo_0": 3, "demo_1": 3, "demo_2": 3}, env_args={"env_kwargs": {"control_freq": 20}})
    with h5py.File(path, "a") as f:
        f["mask/train"] = np.array([b"demo_0", b"demo_2"])
        f["mask/valid"] = np.array([b"demo_1"])
    out = tmp_path / "out"
    assert main(["convert", str(path), "--to", "rlds", "--out", str(out), "--camera", "none", "--fps", "20",
                 "--no-cache", "--workers", "1"]) == 0
    info = json.loads(next((out / "rlds").rglob("dataset_info.json")).read_text())
    lengths = {s["name"]: sum(int(n) for n in s["shardLengths"]) for s in info["splits"]}
    assert lengths == {"train": 2, "val": 1}


@pytest.mark.parametrize(("valid", "splits", "warned"), [
    ([b"demo_2"], {"train": "0:2", "valid": "2:3"}, False),
    ([b"demo_1"], {"train": "0:3"}, True),
])
def test_robomimic_masks_become_lerobot_splits_when_they_are_ranges(
        tmp_path: Path, valid: list[bytes], splits: dict[str, str], warned: bool) -> None:
    """LeRobot `splits` holds episode ranges: a contiguous valid mask becomes one; any other set stays train, warned."""
    path = tmp_path / "lift.hdf5"
    write_robomimic(path, {"demo_0": 3, "demo_1": 3, "demo_2": 3}, env_args={"env_kwargs": {"control_freq": 20}})
    with h5py.File(path, "a") as f:
        f["mask/valid"] = np.array(valid)
    out = tmp_path / "out"
    assert main(["convert", str(path), "--to", "lerobot", "--out", str(out), "--camera", "none", "--fps", "20",
                 "--no-cache", "--workers", "1"]) == 0
    assert json.loads((out / "lerobot/meta/info.json").read_text())["splits"] == splits
    report = json.loads((out / "export.json").read_text())
    assert any("not contiguous" in w for w in json.dumps(report).split('"')) == warned


def test_mapping_renames_datasets_of_known_layouts(tmp_path: Path) -> None:
    path = tmp_path / "demo.hdf5"
    written = write_robomimic(path, {"demo_0": 3})
    ep = robokit.open(path, mapping={"obs/object": "object/state", "obs/agentview_image": "scene"})[0]
    assert np.array_equal(_values(ep["object/state"]), written["demo_0"]["obs/object"])
    assert "obs/object" not in ep.streams and "agentview/rgb" not in ep.streams
    assert isinstance(ep["scene/rgb"], ImageStream)
    aloha = tmp_path / "episode_0.hdf5"
    src = write_aloha(aloha, 3, compress=False, cams=("cam_high",))
    ep = robokit.open(aloha, mapping={"/observations/qpos": "arm/position"})[0]
    assert np.array_equal(_values(ep["arm/position"]), src["qpos"])


def test_compressed_datasets_open_through_hdf5plugin(tmp_path: Path) -> None:
    hdf5plugin = pytest.importorskip("hdf5plugin")
    path = tmp_path / "episode_0.hdf5"
    src = write_aloha(path, 4, compress=False, cams=())
    pixels = _rng(5).integers(0, 255, (4, H, W, 3), dtype=np.uint8)
    with h5py.File(path, "a") as f:
        del f["observations/qpos"]
        f.create_dataset("observations/qpos", data=src["qpos"], chunks=(2, 14), **hdf5plugin.Zstd())
        f.create_dataset("observations/images/cam_high", data=pixels, chunks=(1, H, W, 3), **hdf5plugin.Blosc())
    ep = robokit.open(path)[0]
    assert np.array_equal(_values(ep["joints/position"]), src["qpos"])
    assert all(np.array_equal(f.array(), pixels[i]) for i, f in enumerate(ep["cam_high/rgb"].frames()))  # type: ignore[union-attr]


@pytest.mark.conformance
def test_lerobot_loads_an_aloha_conversion_with_the_recorded_values(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    folder = tmp_path / "aloha"
    folder.mkdir()
    sources = [write_aloha(folder / f"episode_{i}.hdf5", 5, compress=True, seed=i) for i in range(2)]
    out = tmp_path / "out"
    # h264: libsvtav1 in the PyAV wheel lerobot pins (av 15.1) dies with SIGFPE on frames this small
    assert main(["convert", str(folder), "--to", "lerobot", "--out", str(out), "--fps", "50", "--no-cache",
                 "--workers", "1", "--codec", "h264"]) == 0
    ds = LeRobotDataset("robokit/aloha", root=out / "lerobot")
    assert ds.num_episodes == 2 and ds.num_frames == 10
    states, actions = np.vstack([s["qpos"] for s in sources]), np.vstack([s["action"] for s in sources])
    for i in range(ds.num_frames):
        item = ds[i]
        assert np.allclose(item["observation.state"].numpy(), states[i], atol=1e-6)
        assert np.allclose(item["action"].numpy(), actions[i], atol=1e-6)
        assert tuple(item["observation.images.cam_high"].shape) == (3, H, W)


@pytest.mark.parametrize("layout", ["robomimic", "aloha"])
def test_seeded_byte_mutations_give_episodes_or_source_errors(tmp_path: Path, layout: str) -> None:
    """Damaged files never end in a traceback: every episode loads (frames included) or raises a RobokitError."""
    import random

    from robokit.errors import RobokitError

    good = tmp_path / "good.hdf5"
    if layout == "robomimic":
        write_robomimic(good, {"demo_0": 3, "demo_1": 2}, env_args={"env_kwargs": {"control_freq": 20}})
    else:
        write_aloha(good, 3, compress=True)
    data = good.read_bytes()
    for seed in range(12):
        rng = random.Random(seed)
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        path = tmp_path / f"mutant_{seed}.hdf5"
        path.write_bytes(bytes(damaged))
        try:
            for ep in robokit.open(path):
                try:
                    for cam in ep.cameras.values():
                        for frame in cam.frames():
                            frame.array()
                except RobokitError:
                    pass
        except RobokitError:
            pass
        path.unlink()


def test_unknown_layout_reads_through_a_mapping_with_its_rate(tmp_path: Path) -> None:
    path = tmp_path / "custom.h5"
    rng = _rng(9)
    arm, frames = rng.normal(size=(4, 6)), rng.integers(0, 255, (5, H, W, 3), dtype=np.uint8)
    with h5py.File(path, "w") as f:
        f["robot/arm"] = arm
        f["camera/front"] = frames
        f["meta/notes"] = np.zeros(2)
    mapping = {"/robot/arm": "joints/position", "camera/front": "front", "rate": "25"}
    ep = robokit.open(path, mapping=mapping)[0]
    assert set(ep.streams) == {"joints/position", "front/rgb"}
    assert np.array_equal(_values(ep["joints/position"]), arm) and ep["joints/position"].timestamps[1] == 40_000_000
    assert len(ep["front/rgb"]) == 4 and ep.losses[0].messages == 1  # truncated to the shortest, reported
    assert np.array_equal(next(iter(ep["front/rgb"].frames([3]))).array(), frames[3])  # type: ignore[union-attr]
    with pytest.raises(OptionError, match="rate"):
        robokit.open(path, mapping={"robot/arm": "arm", "rate": "fast"})


def test_convert_reads_an_unknown_layout_through_its_mapping_file(tmp_path: Path) -> None:
    path = tmp_path / "custom.h5"
    arm = _rng(10).normal(size=(5, 6))
    with h5py.File(path, "w") as f:
        f["robot/arm"] = arm
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text('robot/arm: arm/position\nrate: "20"\n')
    out = tmp_path / "out"
    assert main(["convert", str(path), "--to", "lerobot", "--out", str(out), "--state", "arm/position", "--fps", "20",
                 "--mapping", str(mapping), "--no-cache", "--workers", "1"]) == 0
    assert np.allclose(_matrix(_table(out / "lerobot"), "observation.state"), arm, atol=1e-6)


def test_isaac_lab_mimic_cameras_nested_states_and_initial_state(tmp_path: Path) -> None:
    """Isaac Lab's recorder: cameras without a suffix, nested `states/...` groups, a one-row `initial_state`."""
    path = tmp_path / "dataset.hdf5"
    rng = _rng(11)
    with h5py.File(path, "w") as f:
        g = f.create_group("data/demo_0")
        g["actions"] = rng.normal(size=(4, 7))
        g["obs/joint_pos"] = rng.normal(size=(4, 9))
        g["obs/table_cam"] = rng.integers(0, 255, (4, H, W, 3), dtype=np.uint8)
        g["states/articulation/robot/joint_position"] = rng.normal(size=(4, 9))
        g["initial_state/articulation/robot/joint_position"] = rng.normal(size=(1, 9))
    ep = robokit.open(path)[0]
    assert {"action", "obs/joint_pos", "table_cam/rgb", "states/articulation/robot/joint_position"} == set(ep.streams)
    skipped = {s.topic: s.reason for s in ep.skipped}
    assert "not one per step" in skipped["/data/demo_0/initial_state/articulation/robot/joint_position"]
    assert ep.complete
