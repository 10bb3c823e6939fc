"""Turns an episode into what tabular writers need: one grid, state/action arrays, cameras, poses.

Written once so LeRobot, RLDS, WebDataset and the rest select, resample, derive, resize and convert
frames identically.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from robokit.converters.extras import Extra, build_extras, extra_channels
from robokit.converters.options import WriterOptions
from robokit.converters.vectors import pose_names
from robokit.errors import ChannelError, ConversionError, ResampleError
from robokit.timeline import Episode, ImageStream, NumericStream, PoseStream, Stream
from robokit.timeline.derived import base_channel

RECORDED_ACTION = "action"  # the channel readers give a dataset's recorded action (LeRobot, RLDS `action`)


DEFAULT_STATE = "joints/position"
_JOINT_TYPES = ("sensor_msgs/msg/JointState", "foxglove.JointStates")
_ODOMETRY_TYPES = ("nav_msgs/msg/Odometry", "foxglove.Odometry")


def estimate_rate(stream: Stream) -> float:
    """A stream's mean rate in Hz (samples per second over its span), snapped to an integer within 2 %.

    The mean, not the median interval: a camera delivering 21.4 frames a second with jittery intervals
    stays at 21.4 Hz (a median of 30 ms intervals would say 33).
    """
    rate = measured_rate(stream)
    nearest = round(rate)
    return float(nearest) if nearest and abs(rate - nearest) <= 0.02 * nearest else rate


def measured_rate(stream: Stream) -> float:
    """Samples per second over the stream's span (0 for fewer than 2 samples or no span)."""
    span = (stream.end_ns - stream.start_ns) / 1e9 if len(stream) >= 2 else 0.0
    return (len(stream) - 1) / span if span > 0 else 0.0


@dataclass(frozen=True)
class PreparedEpisode:
    """One episode on a uniform grid, ready for a writer; `notes` announce what was chosen by default."""

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
    extras: dict[str, Extra] = field(default_factory=dict)  # by channel (see converters/extras)

    @property
    def n_frames(self) -> int:
        return len(self.timestamps)


def _require(episode: Episode, name: str, what: str) -> None:
    if base_channel(name, episode.streams) not in episode.streams:
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


def state_channel(episode: Episode, state: str) -> tuple[str, str]:
    """The state channel to use and a note when it is not the one asked for.

    When the default `joints/position` is absent, the documented fallback is the position of another
    joint group (first by name), else the odometry pose (first by name); without either, a ChannelError
    lists the candidate channels (numeric and moving pose channels).
    """
    streams = episode.streams
    if state != DEFAULT_STATE or base_channel(state, streams) in streams:
        return state, ""

    def from_types(types: tuple[str, ...]) -> list[str]:
        return sorted(n for n, s in streams.items() if s.origin is not None and s.origin.msgtype in types)

    joints = [n for n in from_types(_JOINT_TYPES) if n.endswith("/position")]
    odometry = [n for n in from_types(_ODOMETRY_TYPES) if isinstance(streams[n], PoseStream)]
    for found, what in ((joints, "joint positions"), (odometry, "odometry pose")):
        if found:
            return found[0], f"no {DEFAULT_STATE} channel: the state is {found[0]} ({what})"
    candidates = [n for n, s in streams.items()
                  if isinstance(s, NumericStream) or (isinstance(s, PoseStream) and not s.static)]
    raise ChannelError(state, candidates, what="state channel (no joints or odometry; pass --state)")


def default_rate(episode: Episode, cameras: list[str], state: str) -> tuple[float, str]:
    """The slowest selected camera's measured rate, else the state's; with where it comes from."""
    channels = cameras or [state_channel(episode, state)[0]]
    rates = sorted((estimate_rate(episode.streams[c]), c) for c in channels)
    rate, channel = next(((r, c) for r, c in rates if r > 0), (0.0, channels[0]))
    what = "camera" if cameras else "state"
    measured = measured_rate(episode.streams[channel])
    return rate, f"{what} {channel} measured at {measured:.4g} Hz" if rate else f"{what} {channel} has no rate"


def default_fps(episode: Episode, cameras: list[str], state: str) -> float:
    """The slowest selected camera's rate, or the state's rate when there is no camera."""
    return default_rate(episode, cameras, state)[0]


def prepare(episode: Episode, options: WriterOptions) -> PreparedEpisode:
    """Select, resample, derive, resize and convert frames as `options` say.

    Raises ChannelError when a chosen channel is missing and ConversionError when fewer than
    2 frames remain after resampling (writers skip such episodes with a warning).
    """
    from robokit import frames
    from robokit.resample import resample

    state_name, state_note = state_channel(episode, options.state)
    _require(episode, state_name, "state")
    action_name = action_channel(episode, options)
    if action_name and state_note and base_channel(action_name) == DEFAULT_STATE:  # e.g. the delta of the state
        action_name = state_name + action_name.removeprefix(DEFAULT_STATE)
    if action_name:
        _require(episode, action_name, "action")
    for name in options.poses:
        if not isinstance(episode.streams.get(name), PoseStream):
            raise ChannelError(name, list(episode.poses), what="pose channel")
    cameras = select_cameras(episode, options)
    fps, fps_note = (options.fps, "") if options.fps else default_rate(episode, cameras, state_name)
    if fps <= 0:
        raise ConversionError(f"episode {episode.id}: cannot infer a frame rate; pass fps")
    channels = list(dict.fromkeys([state_name, *cameras, *options.poses]))
    if action_name:
        channels.append(base_channel(action_name, episode.streams))
    extras, extra_notes = extra_channels(episode, [*channels, DEFAULT_STATE, RECORDED_ACTION])
    channels = list(dict.fromkeys([*channels, *extras]))
    try:
        aligned = resample(episode, fps, method=options.resample, channels=channels)
    except ResampleError as exc:
        raise ConversionError(f"episode {episode.id}: {exc}") from exc
    grid = aligned.streams[state_name].timestamps
    if len(grid) < 2:
        raise ConversionError(f"episode {episode.id}: {len(grid)} frame(s) after resampling to {fps} fps")
    state = _vector(aligned[state_name], options)
    action = _vector(aligned[action_name], options) if action_name else None
    if state is None or (action_name and action is None):
        raise ConversionError(f"episode {episode.id}: state and action must be numeric or pose channels")
    images = {c: _sized(aligned.streams[c], options) for c in cameras}
    poses = {n: frames.convert_pose_stream(_pose(aligned.streams[n]), options.frame) for n in options.poses}
    task = options.task or (episode.tasks[0] if episode.tasks else "")
    notes = [note for note in (state_note, fps_note and f"fps {fps:g} by default: {fps_note}") if note]
    return PreparedEpisode(episode, aligned, fps, grid, state, action, images, poses, task, notes + extra_notes,
                           build_extras(aligned.streams, extras))


def _vector(stream: Stream, options: WriterOptions) -> NumericStream | None:
    """A numeric channel as it is; a pose as x, y, z and the quaternion (in `options`' frame and quaternion
    order, named like pose features); None for other kinds."""
    if isinstance(stream, NumericStream):
        return stream
    if not isinstance(stream, PoseStream):
        return None
    from robokit import frames

    pose = frames.convert_pose_stream(stream, options.frame)
    values = np.hstack([pose.translation, frames.to_order(pose.quaternion, options.quat_order)])
    return NumericStream(stream.name, pose.timestamps, values, pose_names(options.quat_order), "m, 1",
                         origin=stream.origin)


def _sized(stream: Stream, options: WriterOptions) -> ImageStream:
    """A camera as writers store it: depth in uint16 millimetres, resized when asked (nearest for depth)."""
    from robokit.timeline.depth import millimetre_stream

    assert isinstance(stream, ImageStream)
    stream = millimetre_stream(stream)
    return stream.resized(*options.image_size) if options.image_size else stream


def _pose(stream: Stream) -> PoseStream:
    assert isinstance(stream, PoseStream)
    return stream
