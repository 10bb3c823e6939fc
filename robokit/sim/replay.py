"""Replay an exported dataset's actions in a MuJoCo model and measure how well the recorded states are tracked.

The dataset (LeRobot, RLDS, MCAP: anything `robokit.open` reads) gives per episode a state channel, an
action channel and, when exported, the tool and cube poses. Absolute actions are joint targets; a delta of
the state (`joints/position_delta`, as the dataset's action metadata or the channel name says) is integrated
into targets (state + delta); other actions (velocities, deltas of another channel) are refused. The model
starts in the first recorded state (the cube at its first recorded pose), each action is held until the next one (as
a policy running at the dataset's rate would), and the simulated joints and tool pose are compared with the
recorded ones at every state sample. Small errors show that actions, joint order, timing and frame
conventions survived the export.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import numpy.typing as npt
from scipy.spatial.transform import Rotation

import robokit
from robokit import frames
from robokit.converters.actions import ActionMeaning, meaning_of_channel
from robokit.errors import SimError, SourceError
from robokit.resample import interpolate as poses_at
from robokit.sim.arm import Arm, compile_model
from robokit.sim.meaning import read_meaning
from robokit.sim.scene import CUBE, JOINTS, TOOL_SITE
from robokit.timeline import Episode, NumericStream, PoseStream, Stream

Floats = npt.NDArray[np.float64]
ACTION_CHANNELS = ("action", "joint_commands/position")  # what LeRobot/RLDS and a bag-like export call it
STATE_CHANNEL = "joints/position"


@dataclass(frozen=True)
class ReplayReport:
    """Tracking errors of one episode: per joint (rad, gripper m), the tool pose (m, degrees), with notes."""

    episode: str
    frames: int
    joints: tuple[str, ...]
    joint_rms: Floats
    joint_max: Floats
    tool_rms: float  # m, simulated tool vs the tool at the recorded joints
    tool_max: float
    tool_rotation_max: float  # degrees
    recorded_tool_max: float | None = None  # m, simulated tool vs the recorded tool pose channel, when exported
    notes: list[str] = field(default_factory=list)

    @property
    def max_joint_error(self) -> float:
        return float(self.joint_max.max()) if len(self.joint_max) else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"episode": self.episode, "frames": self.frames,
                "joints": {n: {"rms": float(r), "max": float(m)}
                           for n, r, m in zip(self.joints, self.joint_rms, self.joint_max, strict=True)},
                "tool_rms_m": self.tool_rms, "tool_max_m": self.tool_max,
                "tool_rotation_max_deg": self.tool_rotation_max, "recorded_tool_max_m": self.recorded_tool_max,
                "notes": self.notes}


def _numeric(episode: Episode, names: tuple[str, ...], what: str, hint: str) -> NumericStream:
    """The first of `names` that is a numeric channel; SimError listing the numeric channels otherwise."""
    for name in names:
        stream = episode.streams.get(name)
        if isinstance(stream, NumericStream) and len(stream):
            return stream
    numeric = sorted(n for n, s in episode.streams.items() if isinstance(s, NumericStream))
    raise SimError(f"episode {episode.id}: no {what} channel ({' or '.join(names)}); numeric channels: "
                   f"{', '.join(numeric) or 'none'}; {hint}")


def _joint_names(actions: NumericStream, states: NumericStream) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Joint names of the action and state dimensions; the scene's joints when an export dropped them."""
    names = actions.names or states.names or (JOINTS if actions.dim == len(JOINTS) else ())
    state_names = states.names or (names if states.dim == len(names) else ())
    if len(names) != actions.dim or sorted(state_names) != sorted(names):
        raise SimError(f"{actions.name} ({actions.dim} joints: {', '.join(names) or 'unnamed'}) and {states.name} "
                       f"({states.dim} joints: {', '.join(state_names) or 'unnamed'}) must name the same joints")
    return names, state_names


def _targets(actions: NumericStream, states: NumericStream, order: list[int], meaning: ActionMeaning,
             notes: list[str]) -> NumericStream:
    """Absolute joint targets from the actions: as they are, or the recorded state + delta (the next frame's
    state, commanded from the delta's own frame); SimError for anything else."""
    if meaning.kind == "absolute":
        return actions
    state = states.name
    if meaning.kind != "delta" or meaning.source != (meaning.state or state):
        raise SimError(f"action {actions.name} is {meaning.channel} ({meaning.kind} of {meaning.source}: "
                       f"{meaning.description}); replay drives joint targets and can integrate only a delta of the "
                       f"state {state}; export an absolute action (e.g. action=joint_commands/position) or "
                       f"action={state}_delta")
    at = np.stack([np.interp(actions.timestamps, states.timestamps, states.values[:, i]) for i in order], axis=1)
    notes.append(f"action {meaning.channel} is a delta: replayed as targets {meaning.source} + action")
    return NumericStream(actions.name, actions.timestamps, at + actions.values, actions.names, actions.unit,
                         origin=actions.origin)


def _place_cube(arm: Arm, data: Any, cube: PoseStream | None, at: int, notes: list[str]) -> None:
    """Put the cube at its recorded pose at time `at` (the first sample at or after it), when there is one."""
    if arm.cube_qpos < 0:
        return
    if cube is None:
        notes.append(f"no tf/{CUBE} pose in the dataset (export it with poses=tf/{CUBE}); the cube starts "
                     "where the model puts it")
        return
    world = frames.convert_pose_stream(cube, "mujoco") if cube.convention != "mujoco" else cube
    i = min(int(np.searchsorted(world.timestamps, at)), len(world) - 1)
    data.qpos[arm.cube_qpos:arm.cube_qpos + 3] = world.translation[i]
    data.qpos[arm.cube_qpos + 3:arm.cube_qpos + 7] = frames.to_order(world.quaternion[i], "wxyz")


def _tool_poses(arm: Arm, positions: Floats) -> tuple[Floats, Floats]:
    """Tool positions (N×3) and rotations (N×3×3) at joint `positions` (N×D), by forward kinematics."""
    data = mujoco.MjData(arm.model)
    out_p, out_r = np.zeros((len(positions), 3)), np.zeros((len(positions), 3, 3))
    for i, q in enumerate(positions):
        arm.set_positions(data, q)
        mujoco.mj_kinematics(arm.model, data)
        out_p[i], out_r[i] = arm.tool_pose(data)
    return out_p, out_r


def _angles_deg(a: Floats, b: Floats) -> Floats:
    """Rotation angles (degrees) between matching rotation matrices."""
    return np.asarray(np.degrees((Rotation.from_matrix(a).inv() * Rotation.from_matrix(b)).magnitude()))


def _controls(actions: NumericStream, steps: npt.NDArray[np.int64], count: int, first: Floats,
              interpolate: bool) -> Floats:
    """The control at each of `count` physics steps, given the step of every action: each action held until the
    next (`first` before the first one), or ramped linearly between consecutive actions."""
    every = np.arange(count)
    if interpolate:
        return np.stack([np.interp(every, steps, column) for column in actions.values.T], axis=1)
    held = np.searchsorted(steps, every, side="right") - 1
    return np.asarray(np.where((held >= 0)[:, None], actions.values[np.maximum(held, 0)], first))


def _simulate(arm: Arm, data: Any, controls: Floats, sample_steps: npt.NDArray[np.int64]) -> tuple[Floats, ...]:
    """Step through `controls`; the joint positions, tool positions and rotations at each of `sample_steps`."""
    joints = np.zeros((len(sample_steps), len(arm.names)))
    tool, rotation = np.zeros((len(sample_steps), 3)), np.zeros((len(sample_steps), 3, 3))
    sample = 0
    for k, control in enumerate(controls):
        mujoco.mj_step1(arm.model, data)  # the state at step k, before its control acts
        while sample < len(sample_steps) and sample_steps[sample] <= k:
            joints[sample] = arm.state(data)[0]
            tool[sample], rotation[sample] = arm.tool_pose(data)
            sample += 1
        data.ctrl[arm.actuators] = control
        mujoco.mj_step2(arm.model, data)
    return joints, tool, rotation


def _recorded_tool_error(stream: Stream | None, times: npt.NDArray[np.int64], tool: Floats) -> float | None:
    """Largest distance between the simulated tool and a recorded tool pose channel, None without one."""
    if not isinstance(stream, PoseStream) or not len(stream):
        return None
    world = frames.convert_pose_stream(stream, "mujoco") if stream.convention != "mujoco" else stream
    inside = (times >= world.timestamps[0]) & (times <= world.timestamps[-1])
    recorded = poses_at(world, times[inside])
    return float(np.linalg.norm(tool[inside] - recorded.translation, axis=1).max(initial=0.0))


def replay_episode(model: Any, episode: Episode, action: str | None = None, state: str = STATE_CHANNEL,
                   interpolate: bool = False, tool: str = f"tf/{TOOL_SITE}", cube: str = f"tf/{CUBE}",
                   meaning: ActionMeaning | None = None) -> ReplayReport:
    """Drive `model` with the episode's actions and compare it with the episode's recorded states.

    Actions hold until the next one, or with `interpolate` ramp linearly between consecutive ones. `meaning`
    (what the dataset says its action is; else read from the channel name) decides absolute or state + delta.
    """
    hint = "export with an action channel, e.g. action=joint_commands/position"
    actions = _numeric(episode, (action,) if action else ACTION_CHANNELS, "action", hint)
    states = _numeric(episode, (state,), "state", "export the joint positions as the state")
    names, state_names = _joint_names(actions, states)
    notes: list[str] = []
    order = np.array([state_names.index(n) for n in names])
    if meaning is None or actions.name not in ("action", meaning.channel):  # the stored one is about another channel
        meaning = meaning_of_channel(actions.name)
    actions = _targets(actions, states, list(order), meaning, notes)
    recorded = states.values[:, order]
    arm = Arm.of(model, names)
    data = mujoco.MjData(model)
    t0 = int(states.timestamps[0])
    cube_stream = episode.streams.get(cube)
    _place_cube(arm, data, cube_stream if isinstance(cube_stream, PoseStream) else None, t0, notes)
    arm.set_state(data, recorded[0])

    dt_ns = float(model.opt.timestep) * 1e9
    state_steps = np.round((states.timestamps - t0) / dt_ns).astype(np.int64)
    action_steps = np.round((actions.timestamps - t0) / dt_ns).astype(np.int64)
    controls = _controls(actions, action_steps, int(state_steps[-1]) + 1, recorded[0], interpolate)
    sim, sim_tool, sim_rot = _simulate(arm, data, controls, state_steps)
    err = np.abs(sim - recorded)
    fk_pos, fk_rot = _tool_poses(arm, recorded)
    tool_err = np.linalg.norm(sim_tool - fk_pos, axis=1)
    recorded_max = _recorded_tool_error(episode.streams.get(tool), states.timestamps, sim_tool)
    if recorded_max is None:
        notes.append(f"no {tool} pose in the dataset: the tool is compared at the recorded joints only")
    return ReplayReport(episode.id, len(recorded), names, np.sqrt((err**2).mean(axis=0)), err.max(axis=0),
                        float(np.sqrt((tool_err**2).mean())), float(tool_err.max()),
                        float(_angles_deg(sim_rot, fk_rot).max()), recorded_max, notes)


def _open_dataset(path: Path) -> list[Episode]:
    """The episodes of `path`; a folder of MCAP files (what the MCAP writer exports) opens file by file."""
    try:
        return robokit.open(path)
    except SourceError:
        files = sorted(path.glob("*.mcap")) if path.is_dir() else []
        if not files:
            raise
        return robokit.open(files)


def replay(dataset: Path, model_path: Path, action: str | None = None, state: str = STATE_CHANNEL,
           interpolate: bool = False) -> list[ReplayReport]:
    """Replay every episode of `dataset` in the model at `model_path`; SimError for what cannot be replayed."""
    model = compile_model(model_path)
    episodes = _open_dataset(dataset)
    if not episodes:
        raise SimError(f"{dataset}: no episodes to replay")
    meaning = None if action else read_meaning(dataset)  # the stored meaning is that of the default action
    return [replay_episode(model, ep, action, state, interpolate, meaning=meaning) for ep in episodes]
