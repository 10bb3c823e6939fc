"""LeRobot v3.0 assembly: encoded episodes, in order, into the data Parquet files, the per-camera MP4 files and
meta/ (episodes, tasks, stats, info.json).

Imported by the writer's `assemble` only, so pyarrow loads in the assembler's thread while the first episode's
encoders already run, not before them.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from robokit import heap
from robokit.converters.lerobot.depth import depth_info
from robokit.converters.lerobot.layout import (
    CHUNKS_SIZE,
    CODEBASE_VERSION,
    DATA_PATH,
    DEFAULT_FEATURES,
    EPISODES_PATH,
    VIDEO_PATH,
    FileCounter,
    split_ranges,
)
from robokit.converters.lerobot.videos import CameraFiles
from robokit.converters.stats import ImageStats, VectorStats, to_json, vector_stats
from robokit.converters.vectors import pose_names
from robokit.converters.video import video_info

if TYPE_CHECKING:
    from robokit.converters.lerobot.writer import EpisodeData, Plan


ROW_GROUP_ROWS = 4096  # rows per Parquet row group at most (an episode's rows never share one with another's):
# pyarrow buffers a whole row group, so a 40-minute episode in one took 54 MiB to write, in these 11 (sample 2400 s)
DICTIONARY_COLUMNS = ("episode_index", "task_index")  # few distinct values; dictionaries of the float columns only
# grow (all values differ) before pyarrow gives them up


class DataFiles:
    """The data Parquet files: an episode's rows in row groups of their own, rolled over once a file reaches
    `max_bytes`."""

    def __init__(self, root: Path, max_bytes: float) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.counter = FileCounter()
        self._writer: Any = None
        self._path: Path | None = None

    def add(self, columns: dict[str, np.ndarray]) -> dict[str, int]:
        """Write one episode's rows a row group at a time (a mapped column's pages leave resident memory after each);
        returns where they went (the episodes table's `data/*` columns)."""
        if self._writer is not None and self._path is not None and self._path.stat().st_size >= self.max_bytes:
            self.close()
            self.counter.advance()
        n = len(next(iter(columns.values())))
        for start in range(0, max(n, 1), ROW_GROUP_ROWS):
            block = {k: v[start:start + ROW_GROUP_ROWS] for k, v in columns.items()}
            table = pa.table({k: _arrow(v) for k, v in block.items()})
            if self._writer is None:
                self._path = self.root / self.counter.path(DATA_PATH)
                self._path.parent.mkdir(parents=True, exist_ok=True)
                self._writer = pq.ParquetWriter(self._path, table.schema, compression="snappy",
                                                use_dictionary=[c for c in DICTIONARY_COLUMNS if c in columns])
            self._writer.write_table(table)
            for v in block.values():
                heap.drop_pages(v)
        heap.release_arrow()
        return {"data/chunk_index": self.counter.chunk, "data/file_index": self.counter.file}

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


EPISODE_ROWS = 100  # episodes-table rows per Parquet row group, written as they come: a row holds every feature's
# stats (34 KiB as Python objects for the sample's), so 100k episodes held until the end took 3 GiB


class EpisodeTable:
    """meta/episodes: a row per episode, written a row group at a time, typed by the first row."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self._rows: list[dict[str, Any]] = []
        self._schema: pa.Schema | None = None
        self._writer: Any = None

    def add(self, row: dict[str, Any]) -> None:
        self._rows.append(row)
        self.count += 1
        if len(self._rows) >= EPISODE_ROWS:
            self._flush()

    def close(self) -> None:
        self._flush()
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _flush(self) -> None:
        if not self._rows:
            return
        if self._writer is None:
            self._schema = _episode_schema(self._rows[0])
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = pq.ParquetWriter(self.path, self._schema)
        self._writer.write_table(pa.Table.from_pylist(self._rows, schema=self._schema))
        self._rows = []


class DatasetWriter:
    """Writes one dataset root from encoded episodes, in order: data and videos as they come, then meta/."""

    def __init__(self, root: Path, plan: Plan) -> None:
        self.root = root
        self.plan = plan
        self.data = DataFiles(root, plan.data_mb * 1e6)
        self.videos: dict[str, CameraFiles] = {}
        self.first: EpisodeData | None = None
        self.tasks: dict[str, int] = dict(plan.tasks)  # text → index, the source's when it had a table
        self.episodes = EpisodeTable(root / EPISODES_PATH.format(chunk_index=0, file_index=0))
        self.splits: list[str] = []
        self.split_warning = ""
        self.values: dict[str, VectorStats] = {}  # every frame's, for the global stats
        self.image_stats: dict[str, ImageStats] = {}  # merged as episodes come (a histogram per camera)
        self.frames = 0

    def add(self, ep: EpisodeData) -> list[str]:
        """Write one episode's rows and videos, returning the files they went to; keep its episodes-table row
        and what the global stats need."""
        if self.first is None:
            self.first = ep
            self.videos = {cam: CameraFiles(self.root, ep.schema.key(cam), ep.schema.fps, self.plan.video_mb * 1e6)
                           for cam, _, _ in ep.schema.cameras}
        n, start, ep_index = ep.n_frames, self.frames, self.episodes.count
        self.splits.append(ep.split)
        frame_index, task_index = ep.columns["frame_index"], self._task_index(ep.task)
        columns = {**ep.columns, "episode_index": _int_column(n, lambda a, b: np.full(b - a, ep_index)),
                   "index": _int_column(n, lambda a, b: start + frame_index[a:b]),
                   "task_index": _int_column(n, lambda a, b: np.full(b - a, task_index))}
        row: dict[str, Any] = {"episode_index": ep_index, "tasks": [ep.task], "length": n, **self.data.add(columns),
                               "dataset_from_index": start, "dataset_to_index": start + n}
        for cam, files in self.videos.items():
            row.update(files.add(ep.videos[cam]))
        stats = {name: vector_stats(v) for name, v in columns.items()}
        stats.update({files.key: ep.videos[cam].stats.stats() for cam, files in self.videos.items()})
        for feature, feature_stats in stats.items():
            for stat, value in feature_stats.items():
                row[f"stats/{feature}/{stat}"] = value.tolist()
        row["meta/episodes/chunk_index"] = 0
        row["meta/episodes/file_index"] = 0
        row.update(ep.trace)
        self.episodes.add(row)
        for name, v in columns.items():
            self.values.setdefault(name, VectorStats()).add(v)
        for cam in self.videos:
            if cam in self.image_stats:
                self.image_stats[cam].merge(ep.videos[cam].stats)
            else:
                self.image_stats[cam] = copy.deepcopy(ep.videos[cam].stats)
        self.frames += n
        return [self.data.counter.path(DATA_PATH)] + [files.counter.path(VIDEO_PATH, video_key=files.key)
                                                      for files in self.videos.values()]

    def _task_index(self, task: str) -> int:
        """The task's index: the source's, else the next free one."""
        return self.tasks.setdefault(task, max(self.tasks.values(), default=-1) + 1)

    def close(self) -> None:
        """Finish the open data, episodes and video files."""
        self.data.close()
        self.episodes.close()
        for files in self.videos.values():
            files.close()

    def write_meta(self) -> None:
        """The rest of meta/ once `close` has finished the episodes table and video files: tasks, stats, then
        info.json (from the closed video files)."""
        self._write_tasks()
        self._write_stats()
        (self.root / "meta" / "info.json").write_text(json.dumps(self._info(self._features()), indent=4))

    # -- metadata ----------------------------------------------------------------------------------

    def _features(self) -> dict[str, Any]:
        assert self.first is not None
        schema, settings, columns = self.first.schema, self.plan.video, self.first.columns
        features: dict[str, Any] = {key: json.loads(feature) for key, feature in schema.vectors}
        if "action" in dict(schema.keys) and schema.action_meaning is not None:  # source channel, absolute or delta
            features[schema.key("action")]["info"] = schema.action_meaning.to_dict()
        for key in schema.poses:
            features[key] = {"dtype": "float32", "shape": [columns[key].shape[1]],
                             "names": list(pose_names(self.plan.options.quat_order))}
        for cam, width, height in schema.cameras:
            first_file = self.videos[cam].first_file
            assert first_file is not None
            info = {**video_info(first_file),
                    "video.g": settings.gop, "video.crf": settings.crf,
                    "video.preset": settings.effective_preset, "video.fast_decode": 0,
                    "video.video_backend": "pyav", "video.extra_options": {}, "is_depth_map": False}
            if self.first.videos[cam].depth:
                info = {**video_info(first_file), **depth_info(settings.gop)}
            elif self.first.videos[cam].copied_gop:  # the recorded stream's own: no crf or preset of ours
                info.update({"video.g": self.first.videos[cam].copied_gop, "video.crf": None, "video.preset": None})
            features[schema.key(cam)] = {"dtype": "video", "shape": [height, width, info["video.channels"]],
                                         "names": ["height", "width", "channels"], "info": info}
        features.update(DEFAULT_FEATURES)
        return features

    def _info(self, features: dict[str, Any]) -> dict[str, Any]:
        assert self.first is not None
        count = self.episodes.count
        splits, self.split_warning = split_ranges(self.splits)
        return {
            "codebase_version": CODEBASE_VERSION, "fps": self.first.schema.fps, "features": features,
            "total_episodes": count, "total_frames": self.frames, "total_tasks": len(self.tasks),
            "chunks_size": CHUNKS_SIZE, "data_files_size_in_mb": math.ceil(self.plan.data_mb),
            "video_files_size_in_mb": math.ceil(self.plan.video_mb), "data_path": DATA_PATH,
            "video_path": VIDEO_PATH if self.videos else None,
            "robot_type": self.plan.options.robot_type or self.first.schema.robot_type or None,
            "splits": splits,
        }

    def _write_tasks(self) -> None:
        tasks = sorted(self.tasks.items(), key=lambda item: item[1])
        table = pa.table({"task_index": pa.array([i for _, i in tasks], pa.int64()),
                          "task": pa.array([t for t, _ in tasks], pa.string())})
        pandas_meta = {
            "index_columns": ["task"],
            "column_indexes": [{"name": None, "field_name": None, "pandas_type": "unicode",
                                "numpy_type": "object", "metadata": {"encoding": "UTF-8"}}],
            "columns": [{"name": "task_index", "field_name": "task_index", "pandas_type": "int64",
                         "numpy_type": "int64", "metadata": None},
                        {"name": "task", "field_name": "task", "pandas_type": "unicode",
                         "numpy_type": "object", "metadata": None}],
            "attributes": {}, "creator": {"library": "pyarrow", "version": pa.__version__},
            "pandas_version": "2.2.0",
        }
        table = table.replace_schema_metadata({"pandas": json.dumps(pandas_meta)})
        (self.root / "meta").mkdir(parents=True, exist_ok=True)
        pq.write_table(table, self.root / "meta" / "tasks.parquet")

    def _write_stats(self) -> None:
        """Global stats: exact over all frames for vectors, merged histograms for images."""
        out: dict[str, Any] = {name: to_json(v.stats()) for name, v in self.values.items()}
        for cam, stats in self.image_stats.items():
            out[self.videos[cam].key] = to_json(stats.stats())
        (self.root / "meta" / "stats.json").write_text(json.dumps(out, indent=4))


def _int_column(n: int, rows: Callable[[int, int], np.ndarray]) -> np.ndarray:
    """An int64 column of `n` rows made a row group at a time by `rows(start, end)`: a long episode's is mapped
    (`heap.joined`), never whole in anonymous memory."""
    return heap.joined(lambda: (np.asarray(rows(a, min(a + ROW_GROUP_ROWS, n)), dtype=np.int64)
                                for a in range(0, n, ROW_GROUP_ROWS)), np.dtype(np.int64), (n,))


def _arrow(values: np.ndarray) -> pa.Array:
    """(N, D) → fixed_size_list<D>; (N,) → a scalar column (LeRobot's shape-[1] features)."""
    if values.ndim == 2:
        return pa.FixedSizeListArray.from_arrays(pa.array(values.reshape(-1)), values.shape[1])
    return pa.array(values)


def _episode_schema(row: dict[str, Any]) -> pa.Schema:
    """Arrow types of the episodes table: ints int64, times double, stats as nested double lists."""
    fields = []
    for key, value in row.items():
        if key == "tasks":
            typ = pa.list_(pa.string())
        elif key in ("robokit.source", "robokit.segment_version"):
            typ = pa.string()
        elif key == "robokit.segment" or key.endswith("/count"):
            typ = pa.list_(pa.int64())
        elif key.startswith("stats/"):
            depth = 1
            probe = value[0] if value else 0.0
            while isinstance(probe, list):
                depth += 1
                probe = probe[0]
            typ = pa.float64()
            for _ in range(depth):
                typ = pa.list_(typ)
        elif key.endswith("_timestamp"):
            typ = pa.float64()
        else:
            typ = pa.int64()
        fields.append(pa.field(key, typ))
    return pa.schema(fields)


