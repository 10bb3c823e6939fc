"""A scripted, seeded pick-and-place: reach over the cube, descend, grasp, lift, carry to the bin, release.

Each episode draws its own cube pose, phase timings, waypoint offsets and command noise from the seed. The
tool follows minimum-jerk straight lines between waypoints; every control tick turns the tool target into
joint commands with MuJoCo-Jacobian IK, warm-started from the previous command.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robokit.sim.ik import Kinematics, pointing_down
from robokit.sim.scene import BIN_CENTER, CUBE_HALF, GRIPPER_OPEN, HOME, TABLE_TOP, CubePose

Floats = npt.NDArray[np.float64]

TASK = "pick up the red cube and place it in the bin"
CUBE_X, CUBE_Y, CUBE_YAW = (0.36, 0.50), (-0.22, -0.02), (-np.pi / 4, np.pi / 4)
# (name, nominal seconds of a 6 s episode, gripper command at the end of the phase)
_PHASES = (("settle", 0.3), ("reach", 1.3), ("descend", 0.8), ("grasp", 0.5), ("lift", 0.7),
           ("carry", 1.2), ("release", 0.4), ("retreat", 0.8))
_CLOSED = 0.0  # the gripper squeezes: the cube stops the fingers at its half width
_GRASP_Z = TABLE_TOP + CUBE_HALF + 0.004
_CARRY_Z = TABLE_TOP + 0.20


@dataclass(frozen=True)
class Waypoint:
    """Where the tool is at the end of a phase: position, yaw about the vertical, gripper command (m)."""

    time: float
    position: Floats
    yaw: float
    gripper: float


@dataclass(frozen=True)
class EpisodePlan:
    """One episode's randomised set-up: the cube's start pose, the tool's waypoints (the first at t = 0), noise."""

    cube: CubePose
    waypoints: tuple[Waypoint, ...]
    noise: float  # rad, standard deviation of the joint command noise


def home_pose(kinematics: Kinematics) -> tuple[Floats, float]:
    """The tool's position and yaw at the home joints."""
    pos, rot = kinematics.forward(HOME[:6])
    return pos, float(np.arctan2(-rot[0, 1], rot[1, 1]))


def _grasp_yaw(cube_yaw: float) -> float:
    """The finger yaw closest to zero that grips the cube across two faces (a square repeats every 90°)."""
    return float((cube_yaw + np.pi / 4) % (np.pi / 2) - np.pi / 4)


def plan_episode(rng: np.random.Generator, duration: float, home: tuple[Floats, float]) -> EpisodePlan:
    """A randomised plan lasting `duration` seconds, starting from the tool's `home` (position, yaw)."""
    cube = CubePose(float(rng.uniform(*CUBE_X)), float(rng.uniform(*CUBE_Y)), float(rng.uniform(*CUBE_YAW)))
    above = np.array([cube.x, cube.y, _GRASP_Z + 0.10]) + rng.normal(0, 0.004, 3)
    grasp = np.array([cube.x, cube.y, _GRASP_Z]) + np.r_[rng.normal(0, 0.002, 2), 0.0]
    place = np.r_[BIN_CENTER + rng.uniform(-0.03, 0.03, 2), _CARRY_Z]
    yaw = _grasp_yaw(cube.yaw)
    targets = (
        (home[0], home[1], GRIPPER_OPEN), (above, yaw, GRIPPER_OPEN), (grasp, yaw, GRIPPER_OPEN),
        (grasp, yaw, _CLOSED), (np.r_[grasp[:2], _CARRY_Z], yaw, _CLOSED), (place, 0.0, _CLOSED),
        (place, 0.0, GRIPPER_OPEN), (place + np.array([-0.05, 0.0, 0.05]), 0.0, GRIPPER_OPEN),
    )
    nominal = np.array([s for _, s in _PHASES]) * rng.uniform(0.9, 1.1, len(_PHASES))
    ends = np.cumsum(nominal) * duration / nominal.sum()
    waypoints = tuple(Waypoint(float(t), np.asarray(p, dtype=np.float64), float(y), g)
                      for t, (p, y, g) in zip(ends, targets, strict=True))
    start = Waypoint(0.0, home[0], home[1], GRIPPER_OPEN)
    return EpisodePlan(cube, (start, *waypoints), float(rng.uniform(0.0005, 0.0015)))


def _min_jerk(s: float) -> float:
    s = min(max(s, 0.0), 1.0)
    return s**3 * (10 - 15 * s + 6 * s * s)


class ScriptedPolicy:
    """Joint commands (arm rad, gripper m) at any time of a plan, in `scene.JOINTS` order."""

    def __init__(self, kinematics: Kinematics, plan: EpisodePlan, rng: np.random.Generator) -> None:
        self.kin = kinematics
        self.plan = plan
        self.rng = rng
        self.q = HOME[:6].copy()

    def target(self, t: float) -> tuple[Floats, float, float]:
        """The tool target (position, yaw) and the gripper command at time `t`."""
        for start, end in zip(self.plan.waypoints[:-1], self.plan.waypoints[1:], strict=True):
            if t <= end.time:
                s = _min_jerk((t - start.time) / max(end.time - start.time, 1e-9))
                return (start.position + s * (end.position - start.position), start.yaw + s * (end.yaw - start.yaw),
                        start.gripper + s * (end.gripper - start.gripper))
        last = self.plan.waypoints[-1]
        return last.position, last.yaw, last.gripper

    def command(self, t: float) -> Floats:
        """The noisy joint command at time `t` (the action the recorder publishes)."""
        position, yaw, gripper = self.target(t)
        self.q = self.kin.solve(position, pointing_down(yaw), self.q)
        noisy = self.q + self.rng.normal(0.0, self.plan.noise, len(self.q))
        return np.append(noisy, gripper)
