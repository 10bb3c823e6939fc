from __future__ import annotations

import json
from pathlib import Path

import av
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import robokit
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.errors import ChannelError


def test_info_and_layout(lerobot_root: Path) -> None:
    info = json.loads((lerobot_root / "meta" / "info.json").read_text())
    assert info["codebase_version"] == "v3.0" and info["fps"] == 15
    assert info["total_episodes"] == 2 and info["total_tasks"] == 2 and info["robot_type"] == "sample_arm"
    feats = info["features"]
    assert feats["observation.state"]["names"][0] == "shoulder_pan" and feats["observation.state"]["shape"] == [7]
    assert feats["observation.tf.tool0"]["names"] == ["x", "y", "z", "qw", "qx", "qy", "qz"]  # wxyz by default
    cam = feats["observation.images.front"]
    assert cam["shape"] == [120, 160, 3] and cam["names"] == ["height", "width", "channels"]
    assert cam["info"]["video.codec"] == "av1" and cam["info"]["video.fps"] == 15
    assert not list(lerobot_root.parent.glob(".lerobot.partial-*"))


def test_data_columns_are_exactly_the_non_video_features(lerobot_root: Path) -> None:
    info = json.loads((lerobot_root / "meta" / "info.json").read_text())
    table = pq.read_table(lerobot_root / "data" / "chunk-000" / "file-000.parquet")
    non_video = {k for k, f in info["features"].items() if f["dtype"] != "video"}
    assert set(table.column_names) == non_video
    state_type = table.schema.field("observation.state").type
    assert pa.types.is_fixed_size_list(state_type) and state_type.list_size == 7
    assert state_type.value_type == pa.float32()
    fi = table.column("frame_index").to_numpy()
    assert np.array_equal(table.column("timestamp").to_numpy(), (fi / 15).astype(np.float32))
    assert np.array_equal(table.column("index").to_numpy(), np.arange(info["total_frames"]))
    assert pq.ParquetFile(lerobot_root / "data" / "chunk-000" / "file-000.parquet").num_row_groups == 2


def test_episodes_meta_videos_and_traceability(lerobot_root: Path) -> None:
    eps = pq.read_table(lerobot_root / "meta" / "episodes" / "chunk-000" / "file-000.parquet").to_pylist()
    assert [e["episode_index"] for e in eps] == [0, 1]
    assert eps[1]["dataset_from_index"] == eps[0]["dataset_to_index"] == eps[0]["length"]
    assert eps[1]["videos/observation.images.front/from_timestamp"] == pytest.approx(eps[0]["length"] / 15)
    assert eps[0]["robokit.source"].endswith("episode_000") and eps[0]["robokit.segment_version"].startswith("s2:")
    assert len(eps[0]["robokit.segment"]) == 2
    assert np.asarray(eps[0]["stats/observation.images.front/mean"]).shape == (3, 1, 1)
    with av.open(str(lerobot_root / "videos" / "observation.images.front" / "chunk-000" / "file-000.mp4")) as c:
        assert sum(1 for _ in c.decode(video=0)) == eps[0]["length"] + eps[1]["length"]


def test_stats_have_quantiles_and_image_shapes(lerobot_root: Path) -> None:
    stats = json.loads((lerobot_root / "meta" / "stats.json").read_text())
    for key in ("observation.state", "action", "timestamp", "index", "observation.images.wrist"):
        assert {"min", "max", "mean", "std", "count", "q01", "q10", "q50", "q90", "q99"} <= set(stats[key])
    img = np.asarray(stats["observation.images.front"]["mean"])
    assert img.shape == (3, 1, 1) and img.min() >= 0 and img.max() <= 1
    assert stats["index"]["count"] == [json.loads((lerobot_root / "meta" / "info.json").read_text())["total_frames"]]


def test_round_trip_values_and_frame_order(lerobot_root: Path, sample_bag: Path) -> None:
    ds = robokit.open(lerobot_root)
    assert len(ds) == 2
    ep = ds[0]
    (src,) = robokit.open(sample_bag)
    aligned = robokit.resample(src, 15, channels=["joints/position", "front/rgb", "wrist/rgb", "tf/tool0"])
    state = ep["joints/position"]
    assert np.allclose(state.values, aligned["joints/position"].values.astype(np.float32))
    assert np.array_equal(state.timestamps, aligned["joints/position"].timestamps)
    assert ep.tasks == src.tasks
    for i in (0, len(state) // 2, len(state) - 1):
        decoded = ep["front/rgb"].frame(i).array().astype(np.float64)
        source = aligned["front/rgb"].frame(i).array().astype(np.float64)
        psnr = 10 * np.log10(255**2 / max(np.mean((decoded - source) ** 2), 1e-9))
        assert psnr > 30, f"frame {i}: PSNR {psnr:.1f} dB"
    again = robokit.open(lerobot_root)[0]
    assert np.array_equal(again["action"].values, ep["action"].values)


def test_missing_channel_is_a_clear_error(sample_bag: Path, tmp_path: Path) -> None:
    with pytest.raises(ChannelError, match="camera 'top/rgb' not found; available: front/rgb, wrist/rgb"):
        get_converter("lerobot").write(robokit.open(sample_bag), tmp_path, WriterOptions(cameras=("top",)))
    assert not any(tmp_path.iterdir())


def test_files_roll_over_and_read_back_like_one_file(lerobot_rolled_root: Path, lerobot_root: Path) -> None:
    data = sorted(p.relative_to(lerobot_rolled_root).as_posix() for p in lerobot_rolled_root.rglob("file-*.*"))
    assert [p for p in data if p.startswith("data/")] == ["data/chunk-000/file-000.parquet",
                                                          "data/chunk-000/file-001.parquet"]
    assert len([p for p in data if p.startswith("videos/observation.images.front/")]) == 2
    eps = pq.read_table(lerobot_rolled_root / "meta" / "episodes" / "chunk-000" / "file-000.parquet").to_pylist()
    assert [(e["data/file_index"], e["videos/observation.images.front/file_index"]) for e in eps] == [(0, 0), (1, 1)]
    assert eps[1]["videos/observation.images.front/from_timestamp"] == 0.0
    info = json.loads((lerobot_rolled_root / "meta" / "info.json").read_text())
    assert info["data_files_size_in_mb"] == info["video_files_size_in_mb"] == 1  # an integer, rounded up
    for one, rolled in zip(robokit.open(lerobot_root), robokit.open(lerobot_rolled_root), strict=True):
        assert np.array_equal(one["action"].values, rolled["action"].values)
        last = len(one["front/rgb"]) - 1
        assert np.array_equal(one["front/rgb"].frame(last).array(), rolled["front/rgb"].frame(last).array())


def test_episode_rows_written_a_row_group_at_a_time(sample_dir: Path, lerobot_root: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """With one episode per row group (the rows are not held until the end), meta/ is the same table and stats."""
    from robokit.converters.lerobot import dataset
    from tests.conftest import LEROBOT_OPTIONS, _write_lerobot

    monkeypatch.setattr(dataset, "EPISODE_ROWS", 1)
    root = _write_lerobot(sample_dir, tmp_path, LEROBOT_OPTIONS)
    episodes = "meta/episodes/chunk-000/file-000.parquet"
    assert pq.ParquetFile(root / episodes).num_row_groups == 2
    assert pq.read_table(root / episodes).equals(pq.read_table(lerobot_root / episodes))
    assert (root / "meta/stats.json").read_text() == (lerobot_root / "meta/stats.json").read_text()
