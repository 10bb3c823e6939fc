"""Turns an episode into what tabular writers need: one grid, state/action arrays, cameras, poses.

Written once so LeRobot, RLDS, WebDataset and the rest select, resample, derive, resize and convert
frames identically.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from robokit.converters.options import WriterOptions
from robokit.errors import ChannelError, ConversionError, ResampleError
from robokit.timeline import Episode, ImageStream, NumericStream, PoseStream, Stream

_DERIVED_SUFFIXES = ("_delta", "_velocity")
RECORDED_ACTION = "action"  # the channel readers give a dataset's recorded action (LeRobot, RLDS `action`)


def estimate_rate(stream: Stream) -> float:
    """A stream's rate in Hz from its median sample interval, snapped to an integer within 2 %."""
    if len(stream) < 2:
        return 0.0
    rate = 1e9 / float(np.median(np.diff(stream.timestamps)))
    nearest = round(rate)
    return float(nearest) if nearest and abs(rate - nearest) <= 0.02 * nearest else rate


def base_channel(name: str) -> str:
    """The recorded channel a derived one comes from (`joints/position_delta` → `joints/position`)."""
    for suffix in _DERIVED_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


@dataclass(frozen=True)
class PreparedEpisode:
    """One episode on a uniform grid, ready for a writer; `notes` say what was changed or dropped."""

    source: Episode
    episode: Episode
    fps: float
    timestamps: np.ndarray
    state: NumericStream
    action: NumericStream | None
    cameras: dict[str, ImageStream]
    poses: dict[str, PoseStream]
    task: str
    notes: list[str] = field(default_factory=list)

    @property
    def n_frames(self) -> int:
        return len(self.timestamps)


def _require(episode: Episode, name: str, what: str) -> None:
    if base_channel(name) not in episode.streams:
        raise ChannelError(name, list(episode.streams), what=f"{what} channel")


def action_channel(episode: Episode, options: WriterOptions) -> str | None:
    """The action to export: the one asked for, else the source's recorded action when it has one."""
    if options.action:
        return options.action
    return RECORDED_ACTION if isinstance(episode.streams.get(RECORDED_ACTION), NumericStream) else None


def select_cameras(episode: Episode, options: WriterOptions) -> list[str]:
    """The camera channels to export: all of them by default, else the named ones (which must exist)."""
    cameras = episode.cameras
    if options.cameras is None:
        return sorted(cameras)
    for name in options.cameras:
        if name not in cameras:
            raise ChannelError(name, list(cameras), what="camera")
    return list(options.cameras)


def default_fps(episode: Episode, cameras: list[str], state: str) -> float:
    """The slowest selected camera's rate, or the state's rate when there is no camera."""
    rates = [estimate_rate(episode.streams[c]) for c in cameras] or [estimate_rate(episode.streams[state])]
    return min(r for r in rates if r > 0) if any(r > 0 for r in rates) else 0.0


def prepare(episode: Episode, options: WriterOptions) -> PreparedEpisode:
    """Select, resample, derive, resize and convert frames as `options` say.

    Raises ChannelError when a chosen channel is missing and ConversionError when fewer than
    2 frames remain after resampling (writers skip such episodes with a warning).
    """
    from robokit import frames
    from robokit.resample import resample

    _require(episode, options.state, "state")
    action_name = action_channel(episode, options)
    if action_name:
        _require(episode, action_name, "action")
    for name in options.poses:
        if not isinstance(episode.streams.get(name), PoseStream):
            raise ChannelError(name, list(episode.poses), what="pose channel")
    cameras = select_cameras(episode, options)
    fps = options.fps or default_fps(episode, cameras, options.state)
    if fps <= 0:
        raise ConversionError(f"episode {episode.id}: cannot infer a frame rate; pass fps")
    channels = list(dict.fromkeys([options.state, *cameras, *options.poses]))
    if action_name:
        channels.append(base_channel(action_name))
    channels = list(dict.fromkeys(channels))
    try:
        aligned = resample(episode, fps, method=options.resample, channels=channels)
    except ResampleError as exc:
        raise ConversionError(f"episode {episode.id}: {exc}") from exc
    grid = aligned.streams[options.state].timestamps
    if len(grid) < 2:
        raise ConversionError(f"episode {episode.id}: {len(grid)} frame(s) after resampling to {fps} fps")
    state = aligned[options.state]
    action = aligned[action_name] if action_name else None
    if not isinstance(state, NumericStream) or not (action is None or isinstance(action, NumericStream)):
        raise ConversionError(f"episode {episode.id}: state and action must be numeric channels")
    images = {c: _sized(aligned.streams[c], options) for c in cameras}
    poses = {n: frames.convert_pose_stream(_pose(aligned.streams[n]), options.frame) for n in options.poses}
    task = options.task or (episode.tasks[0] if episode.tasks else "")
    notes = [f"resampled to {fps:g} fps ({options.resample}), {len(grid)} frames"]
    return PreparedEpisode(episode, aligned, fps, grid, state, action, images, poses, task, notes)


def _sized(stream: Stream, options: WriterOptions) -> ImageStream:
    assert isinstance(stream, ImageStream)
    return stream.resized(*options.image_size) if options.image_size else stream


def _pose(stream: Stream) -> PoseStream:
    assert isinstance(stream, PoseStream)
    return stream
