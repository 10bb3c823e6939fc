"""LeRobot dataset roots (v3.0, and v2.1 with per-episode files) as timeline episodes.

Feature names map back to channels: `observation.state` → `joints/position`, `action` → `action`,
`observation.images.<cam>` → `<cam>/rgb`, pose features (`x, y, z` + quaternion names) → pose streams,
other vectors `observation.<a>.<b>` → `<a>/<b>`. Times restart from the episode's recorded grid start
when robokit wrote the dataset (`robokit.grid_start_ns`), else from 0.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import av
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from robokit.digest import source_digest
from robokit.errors import SourceError
from robokit.frames import from_order
from robokit.sources.framesource import TopicFrames
from robokit.sources.registry import ReadOptions
from robokit.timeline import (
    Episode,
    EpisodeMeta,
    EventStream,
    Frame,
    ImageStream,
    NumericStream,
    PoseStream,
    SkippedTopic,
    Stream,
    StreamOrigin,
)

_IMAGES = "observation.images."
_QUAT_NAMES = {"qx", "qy", "qz", "qw"}


def _channel(key: str) -> str:
    if key == "observation.state":
        return "joints/position"
    if key == "action":
        return "action"
    parts = key.removeprefix("observation.").split(".")
    return parts[0] if len(parts) == 1 else f"{parts[0]}/{'.'.join(parts[1:])}"


def _quat_order(names: list[str]) -> str | None:
    """`xyzw`/`wxyz` when a feature's names are a position plus a quaternion, else None."""
    if len(names) == 7 and names[:3] == ["x", "y", "z"] and set(names[3:]) == _QUAT_NAMES:
        return "".join(n[1] for n in names[3:])
    return None


def _mp4_frames(path: Path, fps: int, first: int, count: int) -> TopicFrames[Frame]:
    """Frames `first`..`first+count-1` of a constant-frame-rate MP4, decoded on demand."""
    frame_ns = 1e9 / fps
    times = (np.arange(first, first + count) * frame_ns).round().astype(np.int64)

    def scan(start: int | None) -> Generator[Frame, None, None]:
        begin = int(times[0]) if start is None else start
        with av.open(str(path)) as container:
            stream: Any = container.streams.video[0]
            time_base = float(stream.time_base)
            container.seek(int(begin / 1e9 / time_base), stream=stream, backward=True, any_frame=False)
            for frame in container.decode(stream):
                t = round(float(frame.pts) * time_base * 1e9)
                if t < begin - frame_ns / 2:
                    continue
                if t > times[-1] + frame_ns / 2:
                    return
                yield Frame("raw", pixels=frame.to_ndarray(format="rgb24"))

    return TopicFrames(scan, lambda f: f, times, f"{path}")


@dataclass(frozen=True)
class _Root:
    path: Path
    info: dict[str, Any]
    tasks: list[str]
    episodes: list[dict[str, Any]]

    @property
    def fps(self) -> int:
        return int(self.info["fps"])

    @property
    def v2(self) -> bool:
        return str(self.info["codebase_version"]).startswith("v2")


def _check_info(path: Path, info: Any) -> dict[str, Any]:
    """meta/info.json with the types robokit relies on checked, naming the field at fault."""
    where = f"{path}: not a readable LeRobot dataset: meta/info.json"
    if not isinstance(info, dict):
        raise SourceError(f"{where}: expected a JSON object")
    if not isinstance(info.get("codebase_version"), str):
        raise SourceError(f"{where}: codebase_version must be a string, got {info.get('codebase_version')!r:.40}")
    fps = info.get("fps")
    if isinstance(fps, bool) or not isinstance(fps, int | float) or not 0 < fps < 1e6:
        raise SourceError(f"{where}: fps must be a positive number, got {fps!r:.40}")
    features = info.get("features")
    if not isinstance(features, dict) or not all(isinstance(f, dict) and isinstance(f.get("dtype"), str)
                                                 for f in features.values()):
        raise SourceError(f"{where}: features must map names to objects with a dtype")
    for key, feature in features.items():
        names = feature.get("names")
        if isinstance(names, dict) and not (names and all(isinstance(v, list) for v in names.values())):
            raise SourceError(f"{where}: features.{key}.names must be a list, or an object of lists")
        if feature["dtype"] == "video" and not (isinstance(feature.get("shape"), list)
                                                and len(feature["shape"]) >= 2):
            raise SourceError(f"{where}: features.{key}.shape must list height and width")
    for key in ("data_path", "video_path"):
        if not isinstance(info.get(key, ""), str | None):
            raise SourceError(f"{where}: {key} must be a string")
    return info


def _load_root(path: Path) -> _Root:
    try:
        info = _check_info(path, json.loads((path / "meta" / "info.json").read_text()))
        if info.get("codebase_version", "").startswith("v2"):
            tasks_rows = [json.loads(line) for line in (path / "meta" / "tasks.jsonl").read_text().splitlines()
                          if line.strip()]
            tasks = [r["task"] for r in sorted(tasks_rows, key=lambda r: r["task_index"])]
            episodes = [json.loads(line) for line in (path / "meta" / "episodes.jsonl").read_text().splitlines()
                        if line.strip()]
        else:
            t = pq.read_table(path / "meta" / "tasks.parquet").to_pylist()
            tasks = [r["task"] for r in sorted(t, key=lambda r: r["task_index"])]
            files = sorted((path / "meta" / "episodes").rglob("*.parquet"))
            episodes = pa.concat_tables([pq.read_table(f) for f in files]).to_pylist() if files else []
    except (OSError, KeyError, ValueError, pa.ArrowException) as exc:
        raise SourceError(f"{path}: not a readable LeRobot dataset ({exc})") from exc
    return _Root(path, info, tasks, sorted(episodes, key=lambda e: e["episode_index"]))


def _episode_data(root: _Root, ep: dict[str, Any]) -> pa.Table:
    info = root.info
    index = int(ep["episode_index"])
    if root.v2:
        chunk = index // int(info.get("chunks_size", 1000))
        path = root.path / info["data_path"].format(episode_chunk=chunk, episode_index=index)
        return pq.read_table(path)
    path = root.path / info["data_path"].format(chunk_index=ep["data/chunk_index"], file_index=ep["data/file_index"])
    return pq.read_table(path, filters=[("episode_index", "=", index)])


def _video(root: _Root, ep: dict[str, Any], key: str, length: int) -> TopicFrames[Frame]:
    info = root.info
    index = int(ep["episode_index"])
    if root.v2:
        chunk = index // int(info.get("chunks_size", 1000))
        path = root.path / info["video_path"].format(episode_chunk=chunk, video_key=key, episode_index=index)
        return _mp4_frames(path, root.fps, 0, length)
    path = root.path / info["video_path"].format(video_key=key, chunk_index=ep[f"videos/{key}/chunk_index"],
                                                 file_index=ep[f"videos/{key}/file_index"])
    return _mp4_frames(path, root.fps, round(float(ep[f"videos/{key}/from_timestamp"]) * root.fps), length)


def _streams(root: _Root, ep: dict[str, Any]) -> tuple[dict[str, Stream], list[SkippedTopic], list[str]]:
    table = _episode_data(root, ep)
    frame_index = table.column("frame_index").to_numpy()
    order = np.argsort(frame_index, kind="stable")
    start = int(ep.get("robokit.grid_start_ns") or 0)
    times = start + (frame_index[order] * (1e9 / root.fps)).round().astype(np.int64)
    streams: dict[str, Stream] = {}
    skipped: list[SkippedTopic] = []
    for key, feature in root.info["features"].items():
        origin = StreamOrigin(key, f"lerobot/{feature['dtype']}", "log")
        if feature["dtype"] == "video":
            if key.startswith(_IMAGES):
                h, w = feature["shape"][:2]
                name = f"{key.removeprefix(_IMAGES)}/rgb"
                streams[name] = ImageStream(name, times, origin=origin, source=_video(root, ep, key, len(times)),
                                            positions=np.arange(len(times)), width=w, height=h)
            continue
        if key in ("timestamp", "frame_index", "episode_index", "index", "task_index") or key not in table.schema.names:
            continue
        if feature["dtype"] not in ("float32", "float64", "int64", "int32", "bool"):
            skipped.append(SkippedTopic(key, feature["dtype"], "unsupported feature dtype", len(times)))
            continue
        col = table.column(key).combine_chunks()
        values = (np.asarray(col.flatten()).reshape(len(col), -1) if pa.types.is_fixed_size_list(col.type)
                  or pa.types.is_list(col.type) else col.to_numpy(zero_copy_only=False).reshape(-1, 1))[order]
        names = list(feature.get("names") or [])
        if isinstance(feature.get("names"), dict):  # some datasets nest names under a key
            names = list(next(iter(feature["names"].values())))
        name = _channel(key)
        quat = _quat_order(names)
        if quat is not None:
            streams[name] = PoseStream(name, times, origin=origin, translation=values[:, :3],
                                       quaternion=from_order(values[:, 3:], quat), convention="rayform")
        else:
            streams[name] = NumericStream(name, times, origin=origin, values=values,
                                          names=tuple(names) if len(names) == values.shape[1] else ())
    task_index = table.column("task_index").to_numpy()[order]
    if len(times):
        streams["task"] = EventStream("task", times[:1], origin=StreamOrigin("task_index", "lerobot/task", "log"),
                                      values=(root.tasks[int(task_index[0])],))
    return streams, skipped, []


class LeRobotReader:
    """LeRobot dataset roots: `meta/info.json` with codebase_version v3.0 or v2.1."""

    name = "lerobot"
    description = "LeRobot dataset root (meta/info.json, v3.0 or v2.1)"

    def sniff(self, path: Path) -> bool:
        info = path / "meta" / "info.json"
        if not info.is_file():
            return False
        try:
            return "codebase_version" in json.loads(info.read_text())
        except (OSError, ValueError, TypeError):
            return False

    def read(self, path: Path, options: ReadOptions) -> list[Episode]:
        root = _load_root(path)
        digest = source_digest(p for p in path.rglob("*") if p.is_file() and p.suffix in (".parquet", ".json"))
        episodes = []
        for ep in root.episodes:
            index = int(ep["episode_index"])
            tags = {k.removeprefix("robokit."): json.dumps(v) if not isinstance(v, str) else v
                    for k, v in ep.items() if k.startswith("robokit.")}
            meta = EpisodeMeta(
                source_uri=f"{path.resolve()}#episode={index}", episode_id=f"{path.name}_{index:06d}",
                source_version=digest, source_format=f"lerobot-{root.info['codebase_version']}",
                tasks=tuple(ep.get("tasks") or ()), robot_type=root.info.get("robot_type") or "", tags=tags,
            )
            episodes.append(Episode(meta, loader=partial(_streams, root, ep)))
        return episodes


LEROBOT_READER = LeRobotReader()
