"""LeRobot v3.0 writer: Parquet data in row groups of one episode each, one continuous MP4 per camera file.

Each episode is encoded on its own (its cameras into in-memory MP4s in parallel threads, its statistics
while frames stream), possibly in another process; assembly then writes the Parquet and remuxes the
episodes' MP4 packets, without re-encoding, into the continuous per-camera files, as lerobot does when
it aggregates datasets.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from robokit import heap
from robokit.converters.actions import ActionMeaning, meaning_of
from robokit.converters.episodes import trace
from robokit.converters.lerobot.depth import DEPTH_MAX, drop_small_depth
from robokit.converters.lerobot.keys import agreed_source_keys, agreed_tasks, data_columns, feature_keys
from robokit.converters.lerobot.layout import (
    DATA_FILE_MB,
    MAX_FILE_MB,
    VIDEO_FILE_MB,
)
from robokit.converters.lerobot.videos import Video, episode_videos
from robokit.converters.options import WriterOptions
from robokit.converters.prepare import PreparedEpisode, default_fps, select_cameras
from robokit.converters.registry import ExtraOption, WriteResult
from robokit.converters.staging import staged_dir
from robokit.converters.streaming import Encoded, EpisodeContext, accepted, prepared_signature, write_streaming
from robokit.converters.vectors import pose_vector
from robokit.converters.video import MAX_GOP, VideoSettings
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


@dataclass(frozen=True)
class Plan:
    """What every episode's encoding shares: options on one integer fps, video settings, file sizes."""

    options: WriterOptions
    video: VideoSettings
    video_mb: float
    data_mb: float
    warnings: tuple[str, ...]
    source_keys: tuple[tuple[str, str], ...] = ()  # what `agreed_source_keys` found
    tasks: tuple[tuple[str, int], ...] = ()  # the source's task table, what `agreed_tasks` found


@dataclass(frozen=True)
class Schema:
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
class EpisodeData:
    """One encoded episode: its per-frame columns (but the global ones), camera videos and traceability."""

    schema: Schema
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

    def plan(self, episodes: Sequence[Episode], options: WriterOptions) -> Plan:
        video = _video_settings(options)
        fps, warnings = _integer_fps(episodes, options)
        keys, key_warnings = agreed_source_keys(episodes, options)
        tasks, task_warnings = agreed_tasks(episodes)
        return Plan(replace(options, fps=fps), video, options.value(VIDEO_FILE), options.value(DATA_FILE),
                    (*warnings, *key_warnings, *task_warnings), tuple(keys.items()), tuple(tasks.items()))

    def busy_cores(self, episodes: Sequence[Episode], plan: Plan) -> int:
        """Cores one episode keeps busy: its cameras, each encoded in its own thread (see `encode`)."""
        try:
            return max(1, len(select_cameras(episodes[0], plan.options))) if episodes else 1
        except (ChannelError, KeyError):
            return 1

    def encode(self, ctx: EpisodeContext, plan: Plan) -> Encoded:
        """One episode's columns and camera MP4s, the cameras encoded in parallel threads (PyAV releases the GIL)."""
        p = ctx.prepared(plan.options)
        p, left_out = drop_small_depth(p, explicit=plan.options.cameras is not None)
        fps = int(p.fps)
        cameras = sorted(p.cameras)
        keys = feature_keys(p, dict(plan.source_keys))
        columns, vectors, not_written = _episode_columns(p, fps, plan.options.quat_order, keys)
        videos = episode_videos({cam: p.cameras[cam] for cam in cameras}, fps, plan.video,
                                plan.options.extra.get(CODEC.name), ctx.spill, ctx.concurrent, ctx.index)
        notes = [v.note for v in videos.values() if v.note]
        schema = Schema(fps, tuple((key, json.dumps(feature)) for key, feature in vectors.items()),
                        tuple(keys[f"pose:{name}"] for name in p.poses),
                        tuple((cam, p.cameras[cam].width, p.cameras[cam].height) for cam in cameras),
                        p.source.meta.robot_type, meaning_of(p), tuple(keys.items()))
        fields = trace(p)
        traced = {"robokit.source": fields["source"], "robokit.segment": [int(t) for t in fields["segment"]],
                  "robokit.segment_version": fields["segment_version"],
                  "robokit.grid_start_ns": int(p.timestamps[0])}
        episode = EpisodeData(schema, columns, videos, p.task, p.n_frames, traced, p.source.meta.tags.get("split", ""))
        signature = {**prepared_signature(p), "feature keys": sorted(keys.values())}
        return Encoded(ctx.index, p.source.id, episode, p.n_frames, signature,
                       warnings=[*left_out, *not_written, *notes])

    def assemble(self, parts: Iterable[Encoded], out_dir: Path, plan: Plan) -> WriteResult:
        from robokit.converters.lerobot.dataset import DatasetWriter  # pyarrow loads here, beside the encoders

        result = WriteResult(warnings=list(plan.warnings))
        with staged_dir(out_dir / self.name, overwrite=plan.options.overwrite) as root:
            dataset = DatasetWriter(root, plan)
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
    # held until the episode is assembled, after its videos: a long episode's in mapped files (`heap.mapped`), each
    # mapped as it is made, so they are never all in anonymous memory at once
    frame_index = heap.mapped(np.arange(p.n_frames, dtype=np.int64))
    columns, vectors, not_written = data_columns(p, keys)
    for name, pose in p.poses.items():
        columns[keys[f"pose:{name}"]] = heap.mapped(pose_vector(pose, quat_order))
    columns["timestamp"] = heap.mapped((frame_index / fps).astype(np.float32))
    columns["frame_index"] = frame_index
    return columns, vectors, not_written


LEROBOT = LeRobotWriter()
