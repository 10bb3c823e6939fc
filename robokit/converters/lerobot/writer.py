"""LeRobot v3.0 writer: Parquet data in row groups per episode, one continuous MP4 per camera file.

Each episode is encoded on its own (its cameras into in-memory MP4s in parallel threads, its statistics
while frames stream), possibly in another process; assembly then writes the Parquet and remuxes the
episodes' MP4 packets, without re-encoding, into the continuous per-camera files, as lerobot does when
it aggregates datasets.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from robokit.converters.actions import ActionMeaning, meaning_of
from robokit.converters.episodes import trace
from robokit.converters.lerobot.depth import DEPTH_MAX, depth_info, drop_small_depth
from robokit.converters.lerobot.keys import agreed_source_keys, agreed_tasks, data_columns, feature_keys
from robokit.converters.lerobot.layout import (
    CHUNKS_SIZE,
    CODEBASE_VERSION,
    DATA_FILE_MB,
    DATA_PATH,
    DEFAULT_FEATURES,
    EPISODES_PATH,
    MAX_FILE_MB,
    VIDEO_FILE_MB,
    VIDEO_PATH,
    FileCounter,
    split_ranges,
)
from robokit.converters.lerobot.videos import CameraFiles, Video, episode_videos
from robokit.converters.options import WriterOptions
from robokit.converters.prepare import PreparedEpisode, default_fps, select_cameras
from robokit.converters.registry import ExtraOption, WriteResult
from robokit.converters.staging import staged_dir
from robokit.converters.stats import ImageStats, merge_image_stats, to_json, vector_stats
from robokit.converters.streaming import Encoded, EpisodeContext, accepted, prepared_signature, write_streaming
from robokit.converters.vectors import pose_names, pose_vector
from robokit.converters.video import MAX_GOP, VideoSettings, video_info
from robokit.errors import ChannelError, OptionError
from robokit.timeline import Episode

CODEC = ExtraOption("codec", str, "av1", "Video codec: av1 (libsvtav1) or h264 (libx264).", ("av1", "h264"))
CRF = ExtraOption("crf", int, 30, "Video quality: constant rate factor (lower is better; h264 up to 51).",
                  low=0, high=63)
GOP = ExtraOption("gop", int, 2, "Keyframe interval in frames (small: fast random access).", low=1, high=MAX_GOP)
PRESET: ExtraOption[str | None] = ExtraOption(
    "preset", str, None, "Encoder preset: 0 to 13 for av1 (default 12), ultrafast to veryslow for h264 "
    "(default veryfast).")
VIDEO_FILE = ExtraOption("video_file_mb", float, float(VIDEO_FILE_MB), "Roll MP4 files over at this size (MB).",
                         low=0, high=MAX_FILE_MB, above=True)
DATA_FILE = ExtraOption("data_file_mb", float, float(DATA_FILE_MB), "Roll data Parquet files over at this size (MB).",
                        low=0, high=MAX_FILE_MB, above=True)
EXTRA_OPTIONS = (CODEC, CRF, GOP, PRESET, VIDEO_FILE, DATA_FILE)
_GLOBAL_COLUMNS = ("episode_index", "index", "task_index")  # filled in by assembly, in dataset order


@dataclass(frozen=True)
class _Plan:
    """What every episode's encoding shares: options on one integer fps, video settings, file sizes."""

    options: WriterOptions
    video: VideoSettings
    video_mb: float
    data_mb: float
    warnings: tuple[str, ...]
    source_keys: tuple[tuple[str, str], ...] = ()  # what `agreed_source_keys` found
    tasks: tuple[tuple[str, int], ...] = ()  # the source's task table, what `agreed_tasks` found


@dataclass(frozen=True)
class _Schema:
    """The features of a dataset, fixed by its first episode."""

    fps: int
    vectors: tuple[tuple[str, str], ...]  # (feature key, description as JSON): state, action, extras
    poses: tuple[str, ...]  # feature keys
    cameras: tuple[tuple[str, int, int], ...]  # (channel, width, height), sorted by channel
    robot_type: str
    action_meaning: ActionMeaning | None = None
    keys: tuple[tuple[str, str], ...] = ()  # (role, feature key) as `feature_keys` gives them

    def key(self, role: str) -> str:
        return dict(self.keys)[role]


@dataclass
class _Episode:
    """One encoded episode: its per-frame columns (but the global ones), camera videos and traceability."""

    schema: _Schema
    columns: dict[str, np.ndarray]
    videos: dict[str, Video]
    task: str
    n_frames: int
    trace: dict[str, Any]  # the `robokit.*` columns of the episodes table
    split: str = ""  # the recorded split (HDF5 `mask/valid`, ...), "" when none


class LeRobotWriter:
    """`--to lerobot`: one LeRobot v3.0 dataset root at `<out>/lerobot/`."""

    name = "lerobot"
    description = "LeRobot v3.0 dataset (Parquet + MP4 + meta/)"
    extra_options = EXTRA_OPTIONS

    def write(self, episodes: Sequence[Episode], out_dir: Path, options: WriterOptions) -> WriteResult:
        return write_streaming(self, episodes, out_dir, options)

    def check_options(self, options: WriterOptions) -> None:
        """What the encoder would refuse: crf and preset of the chosen codec, its top rate, odd image sizes."""
        video = _video_settings(options)
        if options.fps is not None:
            video.check_fps(options.fps)
        width, height = options.image_size or (0, 0)
        if width % 2 or height % 2:
            raise OptionError(f"image_size {width}x{height}: LeRobot video needs an even width and height")

    def plan(self, episodes: Sequence[Episode], options: WriterOptions) -> _Plan:
        video = _video_settings(options)
        fps, warnings = _integer_fps(episodes, options)
        keys, key_warnings = agreed_source_keys(episodes, options)
        tasks, task_warnings = agreed_tasks(episodes)
        return _Plan(replace(options, fps=fps), video, options.value(VIDEO_FILE), options.value(DATA_FILE),
                     (*warnings, *key_warnings, *task_warnings), tuple(keys.items()), tuple(tasks.items()))

    def busy_cores(self, episodes: Sequence[Episode], plan: _Plan) -> int:
        """Cores one episode keeps busy: its cameras, each encoded in its own thread (see `encode`)."""
        try:
            return max(1, len(select_cameras(episodes[0], plan.options))) if episodes else 1
        except (ChannelError, KeyError):
            return 1

    def encode(self, ctx: EpisodeContext, plan: _Plan) -> Encoded:
        """One episode's columns and camera MP4s, the cameras encoded in parallel threads (PyAV releases the GIL)."""
        p = ctx.prepared(plan.options)
        p, left_out = drop_small_depth(p, explicit=plan.options.cameras is not None)
        fps = int(p.fps)
        cameras = sorted(p.cameras)
        keys = feature_keys(p, dict(plan.source_keys))
        columns, vectors, not_written = _episode_columns(p, fps, plan.options.quat_order, keys)
        videos = episode_videos({cam: p.cameras[cam] for cam in cameras}, fps, plan.video,
                                plan.options.extra.get(CODEC.name), ctx.spill, ctx.concurrent)
        notes = [v.note for v in videos.values() if v.note]
        schema = _Schema(fps, tuple((key, json.dumps(feature)) for key, feature in vectors.items()),
                         tuple(keys[f"pose:{name}"] for name in p.poses),
                         tuple((cam, p.cameras[cam].width, p.cameras[cam].height) for cam in cameras),
                         p.source.meta.robot_type, meaning_of(p), tuple(keys.items()))
        fields = trace(p)
        traced = {"robokit.source": fields["source"], "robokit.segment": [int(t) for t in fields["segment"]],
                  "robokit.segment_version": fields["segment_version"],
                  "robokit.grid_start_ns": int(p.timestamps[0])}
        episode = _Episode(schema, columns, videos, p.task, p.n_frames, traced, p.source.meta.tags.get("split", ""))
        signature = {**prepared_signature(p), "feature keys": sorted(keys.values())}
        return Encoded(ctx.index, p.source.id, episode, p.n_frames, signature,
                       warnings=[*left_out, *not_written, *notes])

    def assemble(self, parts: Iterable[Encoded], out_dir: Path, plan: _Plan) -> WriteResult:
        result = WriteResult(warnings=list(plan.warnings))
        with staged_dir(out_dir / self.name, overwrite=plan.options.overwrite) as root:
            dataset = _DatasetWriter(root, plan)
            with closing(dataset):
                for part in accepted(self.name, parts, result):
                    result.episode_files[part.episode_id] = dataset.add(part.data)
                    result.warnings += [f"episode {part.episode_id}: {cam}: {v.clipped} depth pixels beyond "
                                        f"{DEPTH_MAX:g} m stored as {DEPTH_MAX:g} m"
                                        for cam, v in part.data.videos.items() if v.clipped]
            dataset.write_meta()
            result.warnings += [w for w in [dataset.split_warning] if w]
            result.files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        return result

    def check(self, format_dir: Path) -> list[str]:
        """Load with `lerobot` when it is installed, else check the structure with robokit's reader."""
        from robokit.converters.lerobot.check import check_dataset

        return check_dataset(format_dir)


def _video_settings(options: WriterOptions) -> VideoSettings:
    preset = options.value(PRESET)
    return VideoSettings(codec=options.value(CODEC), crf=options.value(CRF), gop=options.value(GOP),
                         preset=int(preset) if preset is not None and preset.isdigit() else preset)


def _integer_fps(episodes: Sequence[Episode], options: WriterOptions) -> tuple[float | None, tuple[str, ...]]:
    """One integer fps for every episode (LeRobot's `fps` is an int): the given or slowest one, rounded."""
    fps = options.fps
    if fps is None:
        fps = min((r for r in _default_rates(episodes, options) if r > 0), default=0.0)
    warnings = (f"fps {fps:.3f} rounded to {round(fps)} (LeRobot needs an integer fps)",) if fps != round(fps) else ()
    if options.fps is None and fps:
        warnings = (f"fps {max(1, round(fps))} by default: the slowest camera (else state) rate measured is "
                    f"{fps:.3g} Hz", *warnings)
    return (float(max(1, round(fps))) if fps else None), warnings


def _default_rates(episodes: Sequence[Episode], options: WriterOptions) -> list[float]:
    """Each episode's default fps; when no episode has the requested channels, the first one's ChannelError."""
    rates: list[float] = []
    error: ChannelError | None = None
    for ep in episodes:
        try:
            rates.append(default_fps(ep, select_cameras(ep, options), options.state))
        except ChannelError as exc:
            error = error or exc
        except KeyError:
            continue
    if error is not None and not rates:
        raise error
    return rates


def _episode_columns(p: PreparedEpisode, fps: int, quat_order: str, keys: dict[str, str]
                     ) -> tuple[dict[str, np.ndarray], dict[str, Any], list[str]]:
    """The per-frame features of one episode but the global ones, vectors (N, D) and scalars (N,); the descriptions
    of the state, action and extras; a warning per extra not written (`keys.data_columns`)."""
    frame_index = np.arange(p.n_frames, dtype=np.int64)
    columns, vectors, not_written = data_columns(p, keys)
    columns.update({keys[f"pose:{name}"]: pose_vector(pose, quat_order) for name, pose in p.poses.items()})
    columns["timestamp"] = (frame_index / fps).astype(np.float32)
    columns["frame_index"] = frame_index
    return columns, vectors, not_written


class _DataFiles:
    """The data Parquet files: one row group per episode, rolled over once a file reaches `max_bytes`."""

    def __init__(self, root: Path, max_bytes: float) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.counter = FileCounter()
        self._writer: Any = None
        self._path: Path | None = None

    def add(self, columns: dict[str, np.ndarray]) -> dict[str, int]:
        """Write one episode's rows; returns where they went (the episodes table's `data/*` columns)."""
        table = pa.table({k: _arrow(v) for k, v in columns.items()})
        if self._writer is not None and self._path is not None and self._path.stat().st_size >= self.max_bytes:
            self.close()
            self.counter.advance()
        if self._writer is None:
            self._path = self.root / self.counter.path(DATA_PATH)
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = pq.ParquetWriter(self._path, table.schema, compression="snappy")
        self._writer.write_table(table)
        return {"data/chunk_index": self.counter.chunk, "data/file_index": self.counter.file}

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


class _DatasetWriter:
    """Writes one dataset root from encoded episodes, in order: data and videos as they come, then meta/."""

    def __init__(self, root: Path, plan: _Plan) -> None:
        self.root = root
        self.plan = plan
        self.data = _DataFiles(root, plan.data_mb * 1e6)
        self.videos: dict[str, CameraFiles] = {}
        self.first: _Episode | None = None
        self.tasks: dict[str, int] = dict(plan.tasks)  # text → index, the source's when it had a table
        self.records: list[dict[str, Any]] = []
        self.splits: list[str] = []
        self.split_warning = ""
        self.values: dict[str, list[np.ndarray]] = {}
        self.image_stats: dict[str, list[ImageStats]] = {}
        self.frames = 0

    def add(self, ep: _Episode) -> list[str]:
        """Write one episode's rows and videos, returning the files they went to; keep its episodes-table row
        and what the global stats need."""
        if self.first is None:
            self.first = ep
            self.videos = {cam: CameraFiles(self.root, ep.schema.key(cam), ep.schema.fps, self.plan.video_mb * 1e6)
                           for cam, _, _ in ep.schema.cameras}
        n, start, ep_index = ep.n_frames, self.frames, len(self.records)
        self.splits.append(ep.split)
        columns = {**ep.columns, "episode_index": np.full(n, ep_index, dtype=np.int64),
                   "index": start + ep.columns["frame_index"],
                   "task_index": np.full(n, self._task_index(ep.task), dtype=np.int64)}
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
        self.records.append(row)
        for name, v in columns.items():
            self.values.setdefault(name, []).append(v)
        for cam in self.videos:
            self.image_stats.setdefault(cam, []).append(ep.videos[cam].stats)
        self.frames += n
        return [self.data.counter.path(DATA_PATH)] + [files.counter.path(VIDEO_PATH, video_key=files.key)
                                                      for files in self.videos.values()]

    def _task_index(self, task: str) -> int:
        """The task's index: the source's, else the next free one."""
        return self.tasks.setdefault(task, max(self.tasks.values(), default=-1) + 1)

    def close(self) -> None:
        """Finish the open data and video files."""
        self.data.close()
        for files in self.videos.values():
            files.close()

    def write_meta(self) -> None:
        """meta/: episodes, tasks, stats, then info.json (from the closed video files)."""
        self._write_episodes()
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
        count = len(self.records)
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

    def _write_episodes(self) -> None:
        table = pa.Table.from_pylist(self.records, schema=_episode_schema(self.records[0]))
        path = self.root / EPISODES_PATH.format(chunk_index=0, file_index=0)
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path)

    def _write_stats(self) -> None:
        """Global stats: exact over all frames for vectors, merged histograms for images."""
        out: dict[str, Any] = {name: to_json(vector_stats(np.concatenate(v))) for name, v in self.values.items()}
        for cam, stats in self.image_stats.items():
            out[self.videos[cam].key] = to_json(merge_image_stats(stats).stats())
        (self.root / "meta" / "stats.json").write_text(json.dumps(out, indent=4))


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


LEROBOT = LeRobotWriter()
