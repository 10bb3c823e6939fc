"""Checks a written LeRobot root: with the real `lerobot` when importable, else structurally."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import av
import pyarrow.parquet as pq

from robokit.converters.consumers import LEROBOT
from robokit.errors import SourceError
from robokit.paths import template_path

REQUIRED_META = ("meta/info.json", "meta/stats.json", "meta/tasks.parquet")
REQUIRED_INFO = ("codebase_version", "fps", "features", "total_episodes", "total_frames", "data_path")


def _required(root: Path, info: dict[str, Any]) -> list[str]:
    """The files and info.json fields lerobot needs before it reads a frame."""
    problems = [f"missing {name}" for name in REQUIRED_META if not (root / name).is_file()]
    problems += [f"meta/info.json: no {key!r}" for key in REQUIRED_INFO if key not in info]
    if not any((root / "meta" / "episodes").rglob("*.parquet")):
        problems.append("missing meta/episodes/*.parquet (the episode metadata)")
    if not any((root / "data").rglob("*.parquet")):
        problems.append("missing data/*.parquet (the frames)")
    return problems


def _data_files(root: Path, info: dict[str, Any], episodes: list[dict[str, Any]]) -> list[str]:
    """Every data file an episode row points at exists."""
    wanted = {(e.get("data/chunk_index"), e.get("data/file_index")) for e in episodes}
    paths = sorted({template_path(root, info["data_path"], {"chunk_index": c, "file_index": f}, "info.json data_path")
                    for c, f in wanted if c is not None})
    return [f"missing {path.relative_to(root)} (named by meta/episodes)" for path in paths if not path.is_file()]


def _structure(root: Path) -> list[str]:
    """Required files, totals, contiguous indices and every referenced MP4 long enough, read without lerobot."""
    try:
        info = json.loads((root / "meta" / "info.json").read_text())
    except ValueError as exc:
        return [f"meta/info.json: not JSON ({exc})"]
    problems = _required(root, info)
    if problems:
        return problems
    try:
        return _contents(root, info)
    except (KeyError, ValueError, OSError) as exc:  # a missing column or field, an unreadable file
        return [f"unreadable metadata: {type(exc).__name__}: {exc}"]
    except SourceError as exc:  # a path template leaving the dataset or reaching into objects
        return [str(exc)]


def _contents(root: Path, info: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    data = sorted((root / "data").rglob("*.parquet"))
    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in data)
    if rows != info["total_frames"]:
        problems.append(f"data holds {rows} frames, info.json says {info['total_frames']}")
    meta_files = sorted((root / "meta" / "episodes").rglob("*.parquet"))
    episodes = [row for f in meta_files for row in pq.read_table(f).to_pylist()]
    if [e["episode_index"] for e in episodes] != list(range(info["total_episodes"])):
        problems.append("episode rows are not 0..total_episodes-1 in order")
    problems += _data_files(root, info, episodes)
    frames: dict[Path, int] = {}
    for key, feature in info["features"].items():
        if feature["dtype"] != "video":
            continue
        for e in episodes:
            fields = {"video_key": key, "chunk_index": e[f"videos/{key}/chunk_index"],
                      "file_index": e[f"videos/{key}/file_index"]}
            path = template_path(root, info["video_path"], fields, "info.json video_path")
            if not path.is_file():
                problems.append(f"missing video {path.relative_to(root)}")
                continue
            if path not in frames:
                with av.open(str(path)) as c:
                    frames[path] = sum(1 for p in c.demux(video=0) if p.size)
            needed = round(e[f"videos/{key}/to_timestamp"] * info["fps"])
            if frames[path] < needed:
                problems.append(f"{path.relative_to(root)} has {frames[path]} frames, episode "
                                f"{e['episode_index']} needs {needed}")
    return problems


def check_dataset(root: Path) -> list[str]:
    """Problems found in the dataset at `root` (empty: it passed)."""
    if not (root / "meta" / "info.json").is_file():
        return [f"{root}: no meta/info.json"]
    problems = _structure(root)
    if problems or not LEROBOT.available():
        return problems
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory() as cache:
        os.environ.setdefault("HF_DATASETS_CACHE", cache)
        try:
            ds = LeRobotDataset("robokit/check", root=root)
            for i in (0, len(ds) - 1):
                ds[i]
        except Exception as exc:  # the consumer's own failure is the finding
            problems.append(f"lerobot could not load it: {type(exc).__name__}: {exc}")
    return problems
