"""The LeRobot reader: v3.0 roots written by robokit, and v2.1 roots (per-episode files)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import robokit
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.video import VideoEncoder, VideoSettings
from robokit.errors import SourceError
from robokit.timeline import ImageStream, NumericStream


def _write_v21(root: Path, lengths: list[int], fps: int = 10) -> None:
    """A minimal v2.1 dataset: per-episode Parquet and MP4, episodes.jsonl, tasks.jsonl."""
    info = {
        "codebase_version": "v2.1", "fps": fps, "chunks_size": 1000, "total_episodes": len(lengths),
        "data_path": "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet",
        "video_path": "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4",
        "features": {
            "observation.state": {"dtype": "float32", "shape": [2], "names": ["a", "b"]},
            "action": {"dtype": "float32", "shape": [2], "names": ["a", "b"]},
            "observation.images.top": {"dtype": "video", "shape": [48, 64, 3],
                                       "names": ["height", "width", "channels"]},
            "timestamp": {"dtype": "float32", "shape": [1], "names": None},
            "frame_index": {"dtype": "int64", "shape": [1], "names": None},
            "episode_index": {"dtype": "int64", "shape": [1], "names": None},
            "index": {"dtype": "int64", "shape": [1], "names": None},
            "task_index": {"dtype": "int64", "shape": [1], "names": None},
        },
    }
    (root / "meta").mkdir(parents=True)
    (root / "meta" / "info.json").write_text(json.dumps(info))
    (root / "meta" / "tasks.jsonl").write_text('{"task_index": 0, "task": "stack"}\n')
    rows = [{"episode_index": i, "tasks": ["stack"], "length": n} for i, n in enumerate(lengths)]
    (root / "meta" / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    index = 0
    for ep, n in enumerate(lengths):
        fi = np.arange(n)
        state = np.stack([fi + 100 * ep, -fi], axis=1).astype(np.float32)
        table = pa.table({
            "observation.state": pa.FixedSizeListArray.from_arrays(pa.array(state.ravel()), 2),
            "action": pa.FixedSizeListArray.from_arrays(pa.array((state * 2).ravel()), 2),
            "timestamp": pa.array((fi / fps).astype(np.float32)), "frame_index": pa.array(fi),
            "episode_index": pa.array(np.full(n, ep)), "index": pa.array(index + fi),
            "task_index": pa.array(np.zeros(n, dtype=np.int64))})
        path = root / f"data/chunk-000/episode_{ep:06d}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path)
        video = root / f"videos/chunk-000/observation.images.top/episode_{ep:06d}.mp4"
        video.parent.mkdir(parents=True, exist_ok=True)
        enc = VideoEncoder(video, 64, 48, fps, VideoSettings(codec="h264", crf=10))
        for i in range(n):
            enc.add(np.full((48, 64, 3), 20 * i % 256, dtype=np.uint8))
        enc.close()
        index += n


def test_v21_root_reads_per_episode_files(tmp_path: Path) -> None:
    _write_v21(tmp_path / "v21", [5, 7])
    eps = robokit.open(tmp_path / "v21")
    assert [e.meta.source_format for e in eps] == ["lerobot-v2.1", "lerobot-v2.1"]
    state = eps[1]["joints/position"]
    assert isinstance(state, NumericStream) and state.names == ("a", "b")
    assert np.array_equal(state.values[:, 0], np.arange(7) + 100)
    assert eps[1].tasks == ("stack",)
    cam = eps[1]["top/rgb"]
    assert isinstance(cam, ImageStream) and len(cam) == 7
    levels = [round(float(f.array().mean())) for f in cam.frames()]
    assert all(abs(a - b) <= 2 for a, b in zip(levels, [20 * i for i in range(7)], strict=True))


def test_lerobot_round_trip_keeps_values_and_frame_order(lerobot_root: Path, tmp_path: Path) -> None:
    """LeRobot → robokit → LeRobot: identical non-video values, frames in the same order."""
    again = tmp_path / "again"
    get_converter("lerobot").write(robokit.open(lerobot_root), again,
                                   WriterOptions(action="action", poses=("tf/tool0",), frame="rayform"))
    a = pq.read_table(lerobot_root / "data/chunk-000/file-000.parquet")
    b = pq.read_table(again / "lerobot/data/chunk-000/file-000.parquet")
    for name in ("observation.state", "action", "observation.tf.tool0", "timestamp", "frame_index", "index"):
        assert a.column(name).equals(b.column(name)), name
    first, second = robokit.open(lerobot_root)[1], robokit.open(again / "lerobot")[1]
    for i in (0, 10, len(first["front/rgb"]) - 1):
        x = first["front/rgb"].frame(i).array().astype(float)
        y = second["front/rgb"].frame(i).array().astype(float)
        assert 10 * np.log10(255**2 / max(np.mean((x - y) ** 2), 1e-9)) > 30


def test_broken_root_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "meta").mkdir()
    (tmp_path / "meta" / "info.json").write_text(json.dumps({"codebase_version": "v3.0", "fps": 10}))
    with pytest.raises(SourceError, match="not a readable LeRobot dataset"):
        robokit.open(tmp_path)


def test_image_features_are_cameras_whatever_their_key(tmp_path: Path) -> None:
    """An `image` feature (PNG bytes in the data Parquet) under a non-standard key reads as a camera, seekable."""
    import io
    import shutil

    from PIL import Image

    root = tmp_path / "apple"
    shutil.copytree(Path(__file__).parents[2] / "realdata" / "lerobot" / "reachy2_apple_storage_v30", root)
    data = root / "data" / "chunk-000" / "file-000.parquet"
    table = pq.read_table(data)

    def png(level: int) -> bytes:
        buf = io.BytesIO()
        Image.fromarray(np.full((6, 8, 3), level % 256, dtype=np.uint8)).save(buf, format="PNG")
        return buf.getvalue()

    frames = table.column("frame_index").to_pylist()
    images = pa.array([{"bytes": png(f), "path": None} for f in frames],
                      pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
    pq.write_table(table.append_column("wrist", images), data)
    info = json.loads((root / "meta" / "info.json").read_text())
    info["features"]["wrist"] = {"dtype": "image", "shape": [6, 8, 3], "names": ["height", "width", "channels"]}
    (root / "meta" / "info.json").write_text(json.dumps(info))
    ep = robokit.open(root)[1]
    cam = ep["wrist/rgb"]
    assert isinstance(cam, ImageStream) and (cam.width, cam.height) == (8, 6) and len(cam) == 300
    assert [int(cam.frame(i).array()[0, 0, 0]) for i in (200, 5, 299)] == [200, 5, 299 % 256]


def test_fewer_rows_than_the_metadata_counts_is_a_loss(tmp_path: Path) -> None:
    """A cut data file (or metadata promising more) never reads as a complete, shorter episode."""
    root = tmp_path / "v21"
    _write_v21(root, [5, 7])
    rows = [json.loads(line) for line in (root / "meta" / "episodes.jsonl").read_text().splitlines()]
    rows[1]["length"] = 10
    (root / "meta" / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    info = json.loads((root / "meta" / "info.json").read_text())
    (root / "meta" / "info.json").write_text(json.dumps({**info, "total_episodes": 50}))
    first, second = robokit.open(root)
    assert first.complete and not second.complete
    assert second.losses[0].messages == 3 and "holds 7 of the 10 frames" in second.losses[0].reason
    assert any("counts 50 episode(s)" in w for w in first.warnings)
    assert not any("counts 50" in w for w in second.warnings)
