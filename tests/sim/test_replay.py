"""Replaying exported actions in the recording's model tracks the recorded states, for every dataset writer.

Bounds: exported at the command rate (100 fps), holding each action reproduces the recording, so every
joint stays within JOINT_BOUND (rad; m for the gripper) and the tool within TOOL_BOUND. Exported at the
front camera's 15 fps, interpolated actions stay within COARSE_BOUND. Shifting the actions by a few
frames breaks the bound, so it does measure timing.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import robokit
from robokit.converters.actions import meaning_of_channel
from robokit.errors import SimError
from robokit.export import export
from robokit.sim.arm import compile_model
from robokit.sim.meaning import read_meaning
from robokit.sim.record import RecordedEpisode
from robokit.sim.replay import replay, replay_episode
from robokit.timeline import NumericStream

JOINT_BOUND = 1e-3
TOOL_BOUND = 1e-3  # m, simulated tool vs the tool at the recorded joints
RECORDED_TOOL_BOUND = 2e-3  # m, vs the exported tf/tool0 (recorded at 50 Hz, resampled linearly to 100 fps)
COARSE_BOUND = 0.05
FORMATS = ("lerobot", "rlds", "mcap")
OPTIONS = {"action": "joint_commands/position", "poses": ["tf/tool0", "tf/cube"], "cameras": [], "fps": 100,
           "resample": "linear"}


@pytest.fixture(scope="module")
def exported(recording: RecordedEpisode, tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("export")
    export([recording.path], FORMATS, dest, OPTIONS, use_cache=False)
    return dest


@pytest.mark.parametrize("fmt", FORMATS)
def test_replay_of_every_writer_tracks_the_recording(exported: Path, model_file: Path, fmt: str) -> None:
    (report,) = replay(exported / fmt, model_file)
    assert report.frames == 201
    assert report.max_joint_error < JOINT_BOUND, dict(zip(report.joints, report.joint_max, strict=True))
    assert report.tool_max < TOOL_BOUND and report.tool_rotation_max < 0.1
    assert report.recorded_tool_max is not None and report.recorded_tool_max < RECORDED_TOOL_BOUND
    assert report.notes == []


def test_replay_at_the_camera_rate_with_interpolation(recording: RecordedEpisode, model_file: Path,
                                                       tmp_path: Path) -> None:
    export([recording.path], ["lerobot"], tmp_path, {**OPTIONS, "fps": 15}, use_cache=False)
    (held,) = replay(tmp_path / "lerobot", model_file)
    (ramped,) = replay(tmp_path / "lerobot", model_file, interpolate=True)
    assert ramped.max_joint_error < COARSE_BOUND
    assert ramped.max_joint_error < held.max_joint_error


def test_shifted_actions_break_the_bound_and_joint_order_follows_names(exported: Path, model_file: Path) -> None:
    model = compile_model(model_file)
    (episode,) = robokit.open(exported / "lerobot")
    action = episode["action"]
    assert isinstance(action, NumericStream)
    late = replace(action, timestamps=action.timestamps + 50_000_000)
    assert replay_episode(model, episode.with_streams({**episode.streams, "action": late})).max_joint_error \
        > 10 * JOINT_BOUND
    reversed_names = replace(action, values=action.values[:, ::-1], names=action.names[::-1])
    report = replay_episode(model, episode.with_streams({**episode.streams, "action": reversed_names}))
    assert report.max_joint_error < JOINT_BOUND


def test_missing_cube_pose_is_noted(recording: RecordedEpisode, model_file: Path, tmp_path: Path) -> None:
    export([recording.path], ["lerobot"], tmp_path, {**OPTIONS, "poses": []}, use_cache=False)
    (report,) = replay(tmp_path / "lerobot", model_file)
    assert any("tf/cube" in n for n in report.notes) and any("tf/tool0" in n for n in report.notes)
    assert report.recorded_tool_max is None
    assert np.isfinite(report.joint_max).all()


def test_a_delta_action_is_integrated_from_the_stored_meaning(recording: RecordedEpisode, model_file: Path,
                                                               tmp_path: Path) -> None:
    """Exported as `action`, the state's delta replays as state + delta (it did as absolute targets: 1.6 rad)."""
    export([recording.path], ["lerobot"], tmp_path, {**OPTIONS, "action": "joints/position_delta", "poses": [],
                                                     "fps": 15}, use_cache=False)
    meaning = read_meaning(tmp_path / "lerobot")
    assert meaning is not None and (meaning.kind, meaning.source, meaning.channel) == \
        ("delta", "joints/position", "joints/position_delta")
    (report,) = replay(tmp_path / "lerobot", model_file)
    assert report.max_joint_error < COARSE_BOUND
    assert any("joints/position_delta is a delta" in n for n in report.notes)
    (episode,) = robokit.open(tmp_path / "lerobot")
    as_absolute = replay_episode(compile_model(model_file), episode)  # no meaning: "action" taken as targets
    assert as_absolute.max_joint_error > 0.5


def test_an_action_replay_cannot_drive_is_refused(recording: RecordedEpisode, model_file: Path) -> None:
    (episode,) = robokit.open(recording.path)
    velocity = meaning_of_channel("joints/position_velocity", "rad/s", "joints/position")
    with pytest.raises(SimError, match=r"velocity of joints/position.*export an absolute action"):
        replay_episode(compile_model(model_file), episode, action="joint_commands/position",
                       meaning=replace(velocity, channel="joint_commands/position"))
    command_delta = meaning_of_channel("joint_commands/position_delta", "rad", "joints/position")
    with pytest.raises(SimError, match="can integrate only a delta of the state joints/position"):
        replay_episode(compile_model(model_file), episode, action="joint_commands/position",
                       meaning=replace(command_delta, channel="joint_commands/position"))
