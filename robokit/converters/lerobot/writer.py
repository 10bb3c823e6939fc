"""LeRobot v3.0 writer: Parquet data in row groups per episode, one continuous MP4 per camera file.

Cameras encode in parallel threads (PyAV releases the GIL) while the main thread writes Parquet;
statistics accumulate while frames stream, so no frame is decoded twice and none is held longer
than it takes to encode it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from robokit.converters.episodes import prepared_episodes
from robokit.converters.lerobot.layout import (
    ACTION_KEY,
    CHUNKS_SIZE,
    CODEBASE_VERSION,
    DATA_FILE_MB,
    DATA_PATH,
    DEFAULT_FEATURES,
    EPISODES_PATH,
    IMAGE_PREFIX,
    MAX_VIDEO_SECONDS,
    STATE_KEY,
    VIDEO_FILE_MB,
    VIDEO_PATH,
    FileCounter,
)
from robokit.converters.options import WriterOptions
from robokit.converters.prepare import PreparedEpisode, default_fps, select_cameras
from robokit.converters.registry import ExtraOption, WriteResult
from robokit.converters.staging import staged_dir
from robokit.converters.stats import ImageStats, merge_image_stats, to_json, vector_stats
from robokit.converters.vectors import pose_names, pose_vector
from robokit.converters.video import VideoEncoder, VideoSettings, video_info
from robokit.errors import ChannelError
from robokit.timeline import Episode

EXTRA_OPTIONS = (
    ExtraOption("codec", str, "av1", "Video codec: av1 (libsvtav1) or h264 (libx264).", ("av1", "h264")),
    ExtraOption("crf", int, 30, "Video quality: constant rate factor (lower is better)."),
    ExtraOption("gop", int, 2, "Keyframe interval in frames (small: fast random access)."),
    ExtraOption("preset", str, None, "Encoder preset (default: 12 for av1, veryfast for h264)."),
    ExtraOption("video_file_mb", float, float(VIDEO_FILE_MB), "Roll MP4 files over at this size (MB)."),
    ExtraOption("data_file_mb", float, float(DATA_FILE_MB), "Roll data Parquet files over at this size (MB)."),
)
_STATS_SAMPLES = 100  # frames per episode fed to the image statistics


def pose_key(channel: str) -> str:
    """Feature name of a pose channel: `tf/tool0` → `observation.tf.tool0` (no `/` allowed)."""
    return "observation." + channel.replace("/", ".")


def camera_key(channel: str) -> str:
    """`front/rgb` → `observation.images.front`; other camera fields keep theirs (`front_depth`)."""
    group, _, kind = channel.partition("/")
    return IMAGE_PREFIX + (group if kind == "rgb" else f"{group}_{kind}")


@dataclass
class _VideoPlacement:
    chunk: int
    file: int
    from_s: float
    to_s: float


@dataclass
class _CameraResult:
    placements: list[_VideoPlacement] = field(default_factory=list)
    stats: list[ImageStats] = field(default_factory=list)
    first_file: str = ""


def _frame_vectors(p: PreparedEpisode, quat_order: str) -> dict[str, np.ndarray]:
    """The vector features of one episode, float32, keyed by feature name."""
    out = {STATE_KEY: p.state.values.astype(np.float32)}
    if p.action is not None:
        out[ACTION_KEY] = p.action.values.astype(np.float32)
    for name, pose in p.poses.items():
        out[pose_key(name)] = pose_vector(pose, quat_order)
    return out


class LeRobotWriter:
    """`--to lerobot`: one LeRobot v3.0 dataset root at `<out>/lerobot/`."""

    name = "lerobot"
    description = "LeRobot v3.0 dataset (Parquet + MP4 + meta/)"
    consumes = "episodes"
    extra_options = EXTRA_OPTIONS

    def write(self, episodes: Sequence[Episode], out_dir: Path, options: WriterOptions) -> WriteResult:
        preset = options.extra.get("preset")
        settings = VideoSettings(
            codec=str(options.extra.get("codec", "av1")), crf=int(options.extra.get("crf", 30)),
            gop=int(options.extra.get("gop", 2)),
            preset=int(preset) if isinstance(preset, str) and preset.isdigit() else preset)
        result = WriteResult()
        prepared = self._prepare_all(episodes, options, result)
        with staged_dir(out_dir / self.name, overwrite=options.overwrite) as root:
            _DatasetWriter(root, prepared, options, settings).write(result)
        return result

    def check(self, format_dir: Path) -> list[str]:
        """Load with `lerobot` when it is installed, else check the structure with robokit's reader."""
        from robokit.converters.lerobot.check import check_dataset

        return check_dataset(format_dir)

    @staticmethod
    def _prepare_all(episodes: Sequence[Episode], options: WriterOptions, result: WriteResult
                     ) -> list[PreparedEpisode]:
        """Prepare every episode on one integer fps (LeRobot's `fps` is an int); unconvertible ones skipped."""
        fps = options.fps
        if fps is None:
            rates = []
            for ep in episodes:
                try:
                    rates.append(default_fps(ep, select_cameras(ep, options), options.state))
                except (ChannelError, KeyError):
                    continue
            fps = min((r for r in rates if r > 0), default=0.0)
        if fps and fps != round(fps):
            result.warnings.append(f"fps {fps:.3f} rounded to {round(fps)} (LeRobot needs an integer fps)")
        opts = replace(options, fps=float(max(1, round(fps))) if fps else None)
        return [p for _, p in prepared_episodes("lerobot", episodes, opts, result)]


class _DatasetWriter:
    """Writes one dataset root from prepared episodes."""

    def __init__(self, root: Path, prepared: list[PreparedEpisode], options: WriterOptions,
                 settings: VideoSettings) -> None:
        self.root = root
        self.eps = prepared
        self.options = options
        self.settings = settings
        self.fps = int(prepared[0].fps)
        self.cameras = sorted(prepared[0].cameras)
        self.video_mb = float(options.extra.get("video_file_mb", VIDEO_FILE_MB))
        self.data_mb = float(options.extra.get("data_file_mb", DATA_FILE_MB))
        self.tasks: dict[str, int] = {}
        for p in prepared:
            self.tasks.setdefault(p.task, len(self.tasks))

    def write(self, result: WriteResult) -> None:
        with ThreadPoolExecutor(max_workers=max(1, len(self.cameras))) as pool:
            futures = {cam: pool.submit(self._encode_camera, cam) for cam in self.cameras}
            data_rows, values = self._write_data()
            videos = {cam: f.result() for cam, f in futures.items()}
        features = self._features(videos)
        self._write_episodes(data_rows, values, videos)
        self._write_tasks()
        self._write_stats(values, videos)
        info = self._info(features)
        (self.root / "meta" / "info.json").write_text(json.dumps(info, indent=4))
        result.files = sorted(str(p.relative_to(self.root.parent / self.root.name))
                              for p in self.root.rglob("*") if p.is_file())

    # -- data --------------------------------------------------------------------------------------

    def _write_data(self) -> tuple[list[dict[str, int]], list[dict[str, np.ndarray]]]:
        """Data Parquet, one row group per episode; returns per-episode placement and column values."""
        counter, writer, path = FileCounter(), None, None
        rows: list[dict[str, int]] = []
        values: list[dict[str, np.ndarray]] = []
        index = 0
        try:
            for ep_index, p in enumerate(self.eps):
                columns = self._episode_columns(p, ep_index, index)
                table = pa.table({k: _arrow(v) for k, v in columns.items()})
                if writer is not None and path is not None and path.stat().st_size >= self.data_mb * 1e6:
                    writer.close()
                    writer = None
                    counter.advance()
                if writer is None:
                    path = self.root / counter.path(DATA_PATH)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    writer = pq.ParquetWriter(path, table.schema, compression="snappy")
                writer.write_table(table)
                rows.append({"data/chunk_index": counter.chunk, "data/file_index": counter.file,
                             "dataset_from_index": index, "dataset_to_index": index + p.n_frames})
                values.append(columns)
                index += p.n_frames
        finally:
            if writer is not None:
                writer.close()
        return rows, values

    def _episode_columns(self, p: PreparedEpisode, ep_index: int, start_index: int) -> dict[str, np.ndarray]:
        """Every non-video feature of one episode: vectors float32 (N, D), scalars (N,)."""
        n = p.n_frames
        frame_index = np.arange(n, dtype=np.int64)
        columns = _frame_vectors(p, self.options.quat_order)
        columns["timestamp"] = (frame_index / self.fps).astype(np.float32)
        columns["frame_index"] = frame_index
        columns["episode_index"] = np.full(n, ep_index, dtype=np.int64)
        columns["index"] = start_index + frame_index
        columns["task_index"] = np.full(n, self.tasks[p.task], dtype=np.int64)
        return columns

    # -- video -------------------------------------------------------------------------------------

    def _encode_camera(self, cam: str) -> _CameraResult:
        """Encode every episode of one camera into continuous MP4s, rolled by size and by duration."""
        key = camera_key(cam)
        out = _CameraResult()
        counter, encoder = FileCounter(), None
        try:
            for p in self.eps:
                stream = p.cameras[cam]
                seconds = p.n_frames / self.fps
                if encoder is not None and (encoder.frames / self.fps + seconds > MAX_VIDEO_SECONDS
                                            or encoder.size() >= self.video_mb * 1e6):
                    encoder.close()
                    encoder = None
                    counter.advance()
                if encoder is None:
                    path = self.root / counter.path(VIDEO_PATH, video_key=key)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    encoder = VideoEncoder(path, stream.width, stream.height, self.fps, self.settings)
                    out.first_file = out.first_file or str(path)
                start = encoder.frames
                stats = ImageStats()
                stride = max(1, p.n_frames // _STATS_SAMPLES)
                for i, frame in enumerate(stream.frames()):
                    pixels = frame.array()
                    encoder.add(pixels)
                    if i % stride == 0:
                        stats.add(pixels if pixels.dtype == np.uint8 else np.zeros((1, 1, 3), np.uint8))
                out.placements.append(_VideoPlacement(counter.chunk, counter.file, start / self.fps,
                                                      encoder.frames / self.fps))
                out.stats.append(stats)
        finally:
            if encoder is not None:
                encoder.close()
        return out

    # -- metadata ----------------------------------------------------------------------------------

    def _features(self, videos: dict[str, _CameraResult]) -> dict[str, Any]:
        p = self.eps[0]
        features: dict[str, Any] = {}
        vec = _frame_vectors(p, self.options.quat_order)
        features[STATE_KEY] = {"dtype": "float32", "shape": [p.state.dim], "names": list(p.state.names)}
        if p.action is not None:
            features[ACTION_KEY] = {"dtype": "float32", "shape": [p.action.dim], "names": list(p.action.names)}
        for name in p.poses:
            features[pose_key(name)] = {"dtype": "float32", "shape": [vec[pose_key(name)].shape[1]],
                                        "names": list(pose_names(self.options.quat_order))}
        for cam in self.cameras:
            s = p.cameras[cam]
            info = {**video_info(Path(videos[cam].first_file)),
                    "video.g": self.settings.gop, "video.crf": self.settings.crf,
                    "video.preset": self.settings.effective_preset, "video.fast_decode": 0,
                    "video.video_backend": "pyav", "video.extra_options": {}, "is_depth_map": False}
            features[camera_key(cam)] = {"dtype": "video", "shape": [s.height, s.width, 3],
                                         "names": ["height", "width", "channels"], "info": info}
        features.update(DEFAULT_FEATURES)
        return features

    def _info(self, features: dict[str, Any]) -> dict[str, Any]:
        total = sum(p.n_frames for p in self.eps)
        return {
            "codebase_version": CODEBASE_VERSION, "fps": self.fps, "features": features,
            "total_episodes": len(self.eps), "total_frames": total, "total_tasks": len(self.tasks),
            "chunks_size": CHUNKS_SIZE, "data_files_size_in_mb": int(self.data_mb),
            "video_files_size_in_mb": int(self.video_mb), "data_path": DATA_PATH,
            "video_path": VIDEO_PATH if self.cameras else None,
            "robot_type": self.options.robot_type or self.eps[0].source.meta.robot_type or None,
            "splits": {"train": f"0:{len(self.eps)}"},
        }

    def _write_tasks(self) -> None:
        table = pa.table({"task_index": pa.array(list(self.tasks.values()), pa.int64()),
                          "task": pa.array(list(self.tasks), pa.string())})
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

    def _episode_stats(self, columns: dict[str, np.ndarray], videos: dict[str, _CameraResult],
                       ep_index: int) -> dict[str, dict[str, np.ndarray]]:
        out = {name: vector_stats(v) for name, v in columns.items()}
        for cam in self.cameras:
            out[camera_key(cam)] = videos[cam].stats[ep_index].stats()
        return out

    def _write_episodes(self, data_rows: list[dict[str, int]],
                        values: list[dict[str, np.ndarray]], videos: dict[str, _CameraResult]) -> None:
        records: list[dict[str, Any]] = []
        for i, p in enumerate(self.eps):
            row: dict[str, Any] = {"episode_index": i, "tasks": [p.task], "length": p.n_frames, **data_rows[i]}
            for cam in self.cameras:
                key, place = camera_key(cam), videos[cam].placements[i]
                row.update({f"videos/{key}/chunk_index": place.chunk, f"videos/{key}/file_index": place.file,
                            f"videos/{key}/from_timestamp": place.from_s, f"videos/{key}/to_timestamp": place.to_s})
            for feature, stats in self._episode_stats(values[i], videos, i).items():
                for stat, value in stats.items():
                    row[f"stats/{feature}/{stat}"] = value.tolist()
            row["meta/episodes/chunk_index"] = 0
            row["meta/episodes/file_index"] = 0
            meta = p.source.meta
            segment = meta.segment or (int(p.timestamps[0]), int(p.timestamps[-1]))
            row["robokit.source"] = meta.source_uri
            row["robokit.segment"] = [int(segment[0]), int(segment[1])]
            row["robokit.segment_version"] = meta.source_version
            row["robokit.grid_start_ns"] = int(p.timestamps[0])
            records.append(row)
        table = pa.Table.from_pylist(records, schema=_episode_schema(records[0]))
        path = self.root / EPISODES_PATH.format(chunk_index=0, file_index=0)
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path)

    def _write_stats(self, values: list[dict[str, np.ndarray]], videos: dict[str, _CameraResult]) -> None:
        """Global stats: exact over all frames for vectors, merged histograms for images."""
        out: dict[str, Any] = {name: to_json(vector_stats(np.concatenate([v[name] for v in values])))
                               for name in values[0]}
        for cam in self.cameras:
            out[camera_key(cam)] = to_json(merge_image_stats(videos[cam].stats).stats())
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
