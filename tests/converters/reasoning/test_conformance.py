"""The real consumers: Hugging Face `datasets` loads annotations.json; `qwen_vl_utils` (the video reader of
Cosmos-Reason and Qwen-VL training) reads every clip, whose frames must cover the item's span."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest

from robokit.export import export
from robokit.samples.completed_scene import write_completed_scene, write_task

pytestmark = pytest.mark.conformance


@pytest.fixture()
def qwen_reader(monkeypatch: pytest.MonkeyPatch) -> Any:
    """qwen_vl_utils with its decord backend (torchcodec needs system FFmpeg libraries; a failing backend
    would fall back to another silently)."""
    pytest.importorskip("decord")
    vision = pytest.importorskip("qwen_vl_utils.vision_process")
    monkeypatch.setattr(vision, "FORCE_QWENVL_VIDEO_READER", "decord")
    vision.get_video_reader_backend.cache_clear()
    yield vision
    vision.get_video_reader_backend.cache_clear()


def _read_clip(vision: Any, path: Path) -> tuple[int, float]:
    """(frames, fps) of a clip as qwen_vl_utils reads it (a local file, sampled at 2 fps like training)."""
    video, meta = vision.fetch_video({"video": str(path), "fps": 2.0}, return_video_metadata=True)
    assert meta["video_backend"] == "decord"
    assert video.ndim == 4 and video.shape[0] >= 1 and video.shape[1] == 3
    return int(meta["total_num_frames"]), float(meta["fps"])


def _covers(entry: dict[str, Any], frames: int, fps: float) -> None:
    meta = entry["metadata"]
    assert meta["clip_start"] <= meta["start"] + 1e-6
    assert frames == meta["clip_frames"]
    assert meta["clip_start"] + frames / fps >= meta["end"] - 1.5 / fps, entry["id"]


def test_consumers_load_both_formats(tmp_path: Path, sample_bag: Path, lerobot_root: Path, qwen_reader: Any) -> None:
    datasets = pytest.importorskip("datasets")
    write_completed_scene(tmp_path / "scene_mp4", cameras=("front", "top"), frames=90, gop=15)
    ros = tmp_path / "scene_ros"
    shutil.copytree(sample_bag, ros / sample_bag.name)
    write_task(ros, "r", "reasoning", [
        {"id": "a", "camera": "front", "start": 0.4, "end": 2.2, "question": "Q?", "reasoning": "R", "answer": "A"}])
    lerobot = tmp_path / "scene_lerobot"
    shutil.copytree(lerobot_root, lerobot / "dataset")
    write_task(lerobot, "c", "caption", [{"id": "a", "camera": "dataset_000001/front", "caption": "arm"}])
    out = tmp_path / "out"
    job = export([tmp_path / "scene_mp4", ros, lerobot], ["cosmos-reason-v1.0", "tao-vl-reason-v1.0"], out,
                 use_cache=False)
    assert job.status == "done"

    cosmos = out / "cosmos-reason-v1.0"
    rows = datasets.load_dataset("json", data_files=str(cosmos / "annotations.json"), split="train",
                                 cache_dir=str(tmp_path / "hf"))
    entries = json.loads((cosmos / "annotations.json").read_text())
    assert len(rows) == len(entries) == 5, (out / "export.log").read_text()
    assert rows[0]["conversations"][0]["from"] == "human" and rows[0]["conversations"][0]["value"].startswith("<video>")
    assert {e["metadata"]["clip"] for e in entries} == {"copied", "encoded"}
    for entry in entries:
        _covers(entry, *_read_clip(qwen_reader, cosmos / entry["video"]))

    tao = out / "tao-vl-reason-v1.0"
    assert json.loads((tao / "annotations.json").read_text()) == entries
    with tarfile.open(tao / "videos.tar.gz") as tar:
        members = {m.name for m in tar.getmembers() if m.isfile()}
        assert {e["video"] for e in entries} <= members
        tar.extractall(tmp_path / "tao", filter="data")
    for entry in entries:
        _covers(entry, *_read_clip(qwen_reader, tmp_path / "tao" / entry["video"]))
