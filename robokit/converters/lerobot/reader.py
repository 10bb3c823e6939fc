"""LeRobot dataset roots (v3.0, and v2.0 and v2.1 with per-episode files) as timeline episodes.

Features are named by whoever recorded them (mapped in `features.py`; every numeric stream's origin keeps its
source feature, so writers can give it back as it was). Features that cannot be mapped are listed with their
reason. Times restart from the episode's recorded grid start when robokit wrote the dataset
(`robokit.grid_start_ns`), else from 0. Metadata errors name the file and the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import av
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from robokit.converters.extras import with_feature
from robokit.converters.lerobot.features import (
    NUMERIC,
    camera_channel,
    channel,
    depth_reader,
    feature_names,
    image_size,
    is_depth,
    quat_order,
    task_origin,
)
from robokit.converters.lerobot.layout import (
    DEFAULT_FEATURES,
    EPISODES_DIR,
    INFO_PATH,
    TASKS_PATH,
    V2_EPISODES_PATH,
    V2_TASKS_PATH,
)
from robokit.digest import source_digest
from robokit.errors import SourceError
from robokit.frames import from_order
from robokit.paths import dataset_files, template_path
from robokit.sources.framesource import TopicFrames
from robokit.sources.registry import ReadOptions
from robokit.timeline import (
    Episode,
    EpisodeMeta,
    EventStream,
    Frame,
    ImageStream,
    Loss,
    NumericStream,
    PoseStream,
    SkippedTopic,
    Stream,
    StreamOrigin,
)
from robokit.timeline.episode import LoadedWithLosses
from robokit.timeline.video import frame_array

_CAMERA_DTYPES = ("video", "image")


class _MetaError(SourceError):
    """A metadata file of a LeRobot root is unreadable: names the file and the field."""

    def __init__(self, root: Path, file: str, field: str, problem: str) -> None:
        where = f"{root / file}" + (f": {field}" if field else "")
        super().__init__(f"not a readable LeRobot dataset: {where}: {problem}")


def _mp4_frames(path: Path, fps: int, first: int, count: int, label: str,
                depth: Callable[[np.ndarray], np.ndarray] | None = None) -> TopicFrames[Frame]:
    """Frames `first`..`first+count-1` of a constant-frame-rate MP4, decoded on demand; `depth` turns a depth
    map's 12-bit codes into millimetres."""
    frame_ns = 1e9 / fps
    times = (np.arange(first, first + count) * frame_ns).round().astype(np.int64)

    def scan(start: int | None) -> Generator[Frame, None, None]:
        if not path.is_file():
            raise SourceError(f"{label}: video file missing: {path}")
        begin = int(times[0]) if start is None else start
        try:
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
                    yield Frame("raw", pixels=frame_array(frame, "rgb24") if depth is None
                                else depth(frame_array(frame, "gray12le")))
        except (av.error.FFmpegError, IndexError) as exc:  # IndexError: no video stream
            raise SourceError(f"{label}: video file {path} cannot be decoded ({type(exc).__name__}: {exc})") from exc

    frames = TopicFrames(scan, lambda f: f, times, label)
    if depth is None:  # a depth map's video holds codes, not a picture
        frames.encoded_video = (path, first / fps)
    return frames


def _encoded_frames(column: pa.ChunkedArray, label: str) -> TopicFrames[Frame]:
    """An `image` feature's frames: PNG/JPEG bytes in the data Parquet's `{bytes, path}` structs."""
    rows = column.to_pylist()
    times = np.arange(len(rows), dtype=np.int64)

    def scan(start: int | None) -> Generator[Frame, None, None]:
        for row in rows[0 if start is None else int(np.searchsorted(times, start)):]:
            data = row.get("bytes") if isinstance(row, dict) else None
            if not data:
                raise SourceError(f"{label}: an image row holds no bytes")
            yield Frame("jpeg" if data[:2] == b"\xff\xd8" else "png", data=data)

    return TopicFrames(scan, lambda f: f, times, label)


@dataclass(frozen=True)
class _Root:
    path: Path
    info: dict[str, Any]
    tasks: dict[int, str]
    episodes: list[dict[str, Any]]
    allow_outside: bool = False  # files reached through symlinks to elsewhere

    @property
    def fps(self) -> int:
        return int(self.info["fps"])

    @property
    def v2(self) -> bool:
        return str(self.info["codebase_version"]).startswith("v2")

    def cameras(self) -> dict[str, dict[str, Any]]:
        return {k: f for k, f in self.info["features"].items() if f.get("dtype") in _CAMERA_DTYPES}

    def data_path(self, ep: dict[str, Any]) -> Path:
        index = int(ep["episode_index"])
        if self.v2:
            return self._expand("data_path", episode_chunk=self._chunk(index), episode_index=index)
        return self._expand("data_path", chunk_index=self._ep(ep, "data/chunk_index"),
                                        file_index=self._ep(ep, "data/file_index"))

    def video_path(self, ep: dict[str, Any], key: str) -> tuple[Path, int]:
        """The MP4 holding camera `key` of episode `ep`, and the episode's first frame in it."""
        index = int(ep["episode_index"])
        if self.v2:
            return self._expand("video_path", episode_chunk=self._chunk(index), video_key=key,
                                            episode_index=index), 0
        path = self._expand("video_path", video_key=key, chunk_index=self._ep(ep, f"videos/{key}/chunk_index"),
                            file_index=self._ep(ep, f"videos/{key}/file_index"))
        return path, round(float(self._ep(ep, f"videos/{key}/from_timestamp")) * self.fps)

    def _chunk(self, index: int) -> int:
        return index // int(self.info.get("chunks_size") or 1000)

    def _expand(self, field: str, **keys: Any) -> Path:
        """The file a `meta/info.json` path template names: documented fields only, kept inside the dataset."""
        return template_path(self.path, self.info.get(field), keys, f"{self.path / INFO_PATH}: {field}",
                             self.allow_outside)

    def _ep(self, ep: dict[str, Any], field: str) -> Any:
        value = ep.get(field)
        if value is None:
            raise _MetaError(self.path, self.episodes_file, field,
                             f"missing for episode {ep.get('episode_index')}")
        return value

    @property
    def episodes_file(self) -> str:
        return V2_EPISODES_PATH if self.v2 else f"{EPISODES_DIR}/*/*.parquet"


def _load_info(path: Path) -> dict[str, Any]:
    try:
        info = json.loads((path / INFO_PATH).read_text())
    except (OSError, ValueError) as exc:
        raise _MetaError(path, INFO_PATH, "", str(exc)) from exc
    if not isinstance(info, dict):
        raise _MetaError(path, INFO_PATH, "", "expected a JSON object")
    version = info.get("codebase_version")
    if not isinstance(version, str) or not version.startswith(("v2", "v3")):
        raise _MetaError(path, INFO_PATH, "codebase_version", f"expected v2.x or v3.x, found {version!r}")
    fps = info.get("fps")
    if isinstance(fps, bool) or not isinstance(fps, int | float) or fps <= 0 or fps != int(fps):
        raise _MetaError(path, INFO_PATH, "fps", f"expected a positive integer, found {fps!r}")
    chunks = info.get("chunks_size", 1000)
    if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks <= 0:
        raise _MetaError(path, INFO_PATH, "chunks_size", f"expected a positive integer, found {chunks!r}")
    features = info.get("features")
    if not isinstance(features, dict) or not all(isinstance(f, dict) for f in features.values()):
        raise _MetaError(path, INFO_PATH, "features", "expected an object of feature objects")
    for key, feature in features.items():
        if not isinstance(feature.get("dtype"), str):
            raise _MetaError(path, INFO_PATH, f"features.{key}.dtype", f"expected a string, found "
                                                                        f"{feature.get('dtype')!r}")
    return info


def _jsonl(path: Path, file: str, required: tuple[str, ...]) -> list[dict[str, Any]]:
    try:
        lines = (path / file).read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise _MetaError(path, file, "", str(exc)) from exc
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise _MetaError(path, file, f"line {number}", str(exc)) from exc
        missing = [k for k in required if not isinstance(row, dict) or k not in row]
        if missing:
            raise _MetaError(path, file, f"line {number}: {missing[0]}", "missing")
        rows.append(row)
    return rows


def _v3_tasks(path: Path) -> dict[int, str]:
    """`meta/tasks.parquet`: the text in the pandas index (`__index_level_0__` or an index named `task`),
    or in a `task` column; `task_index` as a column (else the row position)."""
    try:
        table = pq.read_table(path / TASKS_PATH)
    except (OSError, pa.ArrowException, UnicodeDecodeError) as exc:
        raise _MetaError(path, TASKS_PATH, "", str(exc)) from exc
    try:
        pandas_meta = json.loads((table.schema.metadata or {}).get(b"pandas", b"{}") or b"{}")
    except ValueError as exc:
        raise _MetaError(path, TASKS_PATH, "pandas metadata", str(exc)) from exc
    index_columns = [c for c in (pandas_meta.get("index_columns") if isinstance(pandas_meta, dict) else None) or []
                     if isinstance(c, str)]
    candidates = ["task", *index_columns, "__index_level_0__"]
    text = next((c for c in candidates if c in table.column_names
                 and pa.types.is_string(table.schema.field(c).type) | pa.types.is_large_string(
                     table.schema.field(c).type)), None)
    if text is None:
        raise _MetaError(path, TASKS_PATH, "task", f"no task text column or pandas index (columns: "
                                                   f"{', '.join(table.column_names)})")
    try:
        texts = [str(t) for t in table.column(text).to_pylist()]
    except UnicodeDecodeError as exc:
        raise _MetaError(path, TASKS_PATH, text, str(exc)) from exc
    if "task_index" in table.column_names:
        indices = table.column("task_index").to_pylist()
        if any(not isinstance(i, int) for i in indices):
            raise _MetaError(path, TASKS_PATH, "task_index", "expected integers")
    else:
        indices = list(range(len(texts)))
    return dict(zip(indices, texts, strict=True))


def _v3_episodes(path: Path) -> list[dict[str, Any]]:
    files = sorted((path / EPISODES_DIR).glob("*/*.parquet"))
    if not files:
        raise _MetaError(path, f"{EPISODES_DIR}/*/*.parquet", "", "no episode metadata files")
    rows: list[dict[str, Any]] = []
    for file in files:
        try:
            schema = pq.read_schema(file)
            columns = [c for c in schema.names if not c.startswith("stats/")]  # per-episode stats are not read
            rows += pq.read_table(file, columns=columns).to_pylist()
        except (OSError, pa.ArrowException, UnicodeDecodeError) as exc:
            raise _MetaError(path, str(file.relative_to(path)), "", str(exc)) from exc
    return rows


def _load_root(path: Path) -> _Root:
    info = _load_info(path)
    if info["codebase_version"].startswith("v2"):
        task_rows = _jsonl(path, V2_TASKS_PATH, ("task_index", "task"))
        if any(not isinstance(r["task_index"], int) for r in task_rows):
            raise _MetaError(path, V2_TASKS_PATH, "task_index", "expected integers")
        tasks = {r["task_index"]: str(r["task"]) for r in task_rows}
        episodes = _jsonl(path, V2_EPISODES_PATH, ("episode_index",))
        episodes_file = V2_EPISODES_PATH
    else:
        tasks = _v3_tasks(path)
        episodes = _v3_episodes(path)
        episodes_file = f"{EPISODES_DIR}/*/*.parquet"
    for row in episodes:
        if not isinstance(row.get("episode_index"), int):
            raise _MetaError(path, episodes_file, "episode_index", f"expected an integer, found "
                                                                  f"{row.get('episode_index')!r}")
    return _Root(path, info, tasks, sorted(episodes, key=lambda e: e["episode_index"]))


def _episode_data(root: _Root, ep: dict[str, Any]) -> pa.Table:
    path = root.data_path(ep)
    if not path.is_file():
        raise SourceError(f"{root.path}: episode {ep['episode_index']}: data file missing: {path}")
    try:
        if root.v2:
            return pq.read_table(path)
        return pq.read_table(path, filters=[("episode_index", "=", int(ep["episode_index"]))])
    except (OSError, pa.ArrowException) as exc:
        raise SourceError(f"{root.path}: episode {ep['episode_index']}: data file {path} unreadable ({exc})") from exc


def _frames_lost(root: _Root, ep: dict[str, Any], rows: int) -> list[Loss]:
    """A loss when the data file holds fewer rows of an episode than its metadata `length` says."""
    length = ep.get("length")
    if not isinstance(length, int) or rows >= length:
        return []
    return [Loss("data", f"{root.data_path(ep).relative_to(root.path)} holds {rows} of the {length} frames "
                         f"the episode metadata counts", length - rows)]


def _totals_warning(root: _Root) -> str:
    """A warning when `meta/info.json`'s totals promise more episodes or frames than the metadata lists."""
    episodes, frames = root.info.get("total_episodes"), root.info.get("total_frames")
    listed = len(root.episodes)
    listed_frames = sum(int(e.get("length") or 0) for e in root.episodes)
    if (isinstance(episodes, int) and episodes > listed) or (isinstance(frames, int) and frames > listed_frames):
        return (f"{INFO_PATH} counts {episodes} episode(s) and {frames} frames; the episode metadata lists {listed} "
                f"and {listed_frames} (a partial copy of the dataset?)")
    return ""


def _streams(root: _Root, ep: dict[str, Any]) -> LoadedWithLosses:
    table = _episode_data(root, ep)
    warnings: list[str] = []
    if "frame_index" in table.column_names:
        frame_index = table.column("frame_index").to_numpy()
    else:  # v2.0 datasets converted by other tools (GR00T's demo data) have none
        frame_index = np.arange(table.num_rows)
        warnings.append(f"{root.data_path(ep).relative_to(root.path)}: no frame_index column: frames in row order")
    order = np.argsort(frame_index, kind="stable")
    start = int(ep.get("robokit.grid_start_ns") or 0)
    times = start + (frame_index[order] * (1e9 / root.fps)).round().astype(np.int64)
    streams: dict[str, Stream] = {}
    skipped: list[SkippedTopic] = []
    n = len(times)
    label = f"{root.path.name} episode {ep['episode_index']}"
    for key, feature in root.info["features"].items():
        dtype = feature["dtype"]
        origin = StreamOrigin(key, f"lerobot/{dtype}", "log")
        if dtype in _CAMERA_DTYPES:
            depth = depth_reader(feature) if is_depth(feature) else None
            if isinstance(depth, str):
                skipped.append(SkippedTopic(key, f"lerobot/{dtype}", depth, n))
                continue
            height, width = image_size(feature)
            name = camera_channel(key, depth=depth is not None)
            if dtype == "video":
                path, first = root.video_path(ep, key)
                if not path.is_file():
                    warnings.append(f"camera {key}: video file missing: {path.relative_to(root.path)}")
                source: TopicFrames[Frame] = _mp4_frames(path, root.fps, first, n, f"{label} {key}", depth)
            elif key in table.column_names:
                source = _encoded_frames(table.column(key).take(order), f"{label} {key}")
            else:
                skipped.append(SkippedTopic(key, f"lerobot/{dtype}", "no column in the data file", n))
                continue
            streams[name] = ImageStream(name, times, origin=origin, source=source, positions=np.arange(n),
                                        width=width, height=height, encoding="rgb8" if depth is None else "16UC1")
            continue
        if key not in DEFAULT_FEATURES:
            stream = numeric_stream(key, feature, table, order, times, skipped, warnings)
            if stream is not None and stream.name in streams:  # `state` beside `observation.state`: its own key
                warnings.append(f"feature {key}: channel {stream.name} is an earlier feature's; read as channel {key}")
                stream = replace(stream, name=key)
            if stream is not None:
                streams[stream.name] = stream
    known = set(root.info["features"])
    skipped += [SkippedTopic(c, "lerobot/column", "column not declared in meta/info.json features", n)
                for c in table.column_names if c not in known]
    if n and "task_index" in table.column_names:
        task_index = int(table.column("task_index").to_numpy()[order][0])
        text = root.tasks.get(task_index)
        if text is None:
            warnings.append(f"task_index {task_index} is not in the tasks metadata")
        else:
            origin = task_origin(root.tasks)
            streams["task"] = EventStream("task", times[:1], origin=origin, values=(text,))
    return streams, skipped, warnings, _frames_lost(root, ep, n)


class LeRobotReader:
    """LeRobot dataset roots: `meta/info.json` with codebase_version v3.0, v2.1 or v2.0."""

    name = "lerobot"
    description = "LeRobot dataset root (meta/info.json, v3.0, v2.1 or v2.0)"

    def sniff(self, path: Path) -> bool:
        info = path / INFO_PATH
        if not info.is_file():
            return False
        try:
            return "codebase_version" in json.loads(info.read_text())
        except (OSError, ValueError, TypeError):
            return False

    def read(self, path: Path, options: ReadOptions) -> list[Episode]:
        root = replace(_load_root(path), allow_outside=options.allow_outside)
        digest = source_digest(dataset_files(path, options.allow_outside), path)  # videos too
        totals = _totals_warning(root)
        episodes: list[Episode] = []
        for ep in root.episodes:
            index = int(ep["episode_index"])
            tags = {k.removeprefix("robokit."): json.dumps(v) if not isinstance(v, str) else v
                    for k, v in ep.items() if k.startswith("robokit.")}
            tasks = ep.get("tasks") or ()
            meta = EpisodeMeta(
                source_uri=f"{path.resolve()}#episode={index}", episode_id=f"{path.name}_{index:06d}",
                source_version=digest, source_format=f"lerobot-{root.info['codebase_version']}",
                tasks=tuple(str(t) for t in (tasks if isinstance(tasks, list | tuple) else [tasks])),
                robot_type=root.info.get("robot_type") or "", tags=tags,
            )
            first = not episodes  # a dataset-wide warning travels with the first episode
            episodes.append(Episode(meta, loader=partial(_streams, root, ep), warnings=[totals] if totals and first
                                    else []))
        return episodes


LEROBOT_READER = LeRobotReader()


def _vector(col: pa.ChunkedArray) -> np.ndarray:
    col = col.combine_chunks()
    if pa.types.is_fixed_size_list(col.type) or pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        return np.asarray(col.flatten().to_numpy(zero_copy_only=False)).reshape(len(col), -1)
    return np.asarray(col.to_numpy(zero_copy_only=False)).reshape(-1, 1)


def numeric_stream(key: str, feature: dict[str, Any], table: pa.Table, order: np.ndarray, times: np.ndarray,
                   skipped: list[SkippedTopic], warnings: list[str]) -> Stream | None:
    """A numeric feature's column as a numeric or pose stream whose origin carries the feature; None (with the
    reason in `skipped`) when it has no column or is not a numeric vector."""
    dtype, n = feature["dtype"], len(times)
    msgtype = f"lerobot/{dtype}"
    if key not in table.column_names:
        skipped.append(SkippedTopic(key, msgtype, "declared in meta/info.json, no column in the data file", 0))
        return None
    if dtype not in NUMERIC:
        skipped.append(SkippedTopic(key, msgtype, f"dtype {dtype} is not numeric or a camera", n))
        return None
    try:
        values = _vector(table.column(key))[order]
    except (pa.ArrowException, ValueError) as exc:
        skipped.append(SkippedTopic(key, msgtype, f"column is not a fixed-width vector ({exc})", n))
        return None
    origin = with_feature(StreamOrigin(key, msgtype, "log"), feature)
    names, name = feature_names(feature), channel(key)
    quat = quat_order(names)
    if quat is not None and values.shape[1] == 7:
        return PoseStream(name, times, origin=origin, translation=values[:, :3],
                          quaternion=from_order(values[:, 3:], quat), convention="rayform")
    if names and len(names) != values.shape[1]:
        warnings.append(f"feature {key}: {len(names)} names for {values.shape[1]} values; names dropped")
        names = []
    return NumericStream(name, times, origin=origin, values=values, names=tuple(names))
