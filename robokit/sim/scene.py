"""robokit's built-in MJCF scene: a table, a bin, a red cube and a 6-DoF arm with a parallel gripper.

Everything is built from primitives, so nothing is downloaded. The world is Z-up in metres (MuJoCo's and
robokit's FLU). The arm is position controlled: one actuator per published joint, named like the joint. The
gripper actuator drives a tendon that couples both fingers, and its value is the opening of one finger in
metres (0 = closed, 0.04 = open). Two cameras: `front` (fixed) and `wrist` (on the hand).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]

ARM_JOINTS = ("shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3")
GRIPPER = "gripper"
JOINTS = (*ARM_JOINTS, GRIPPER)  # the published joint state and the action, in this order
FINGERS = ("finger_left", "finger_right")
TOOL_SITE = "tool0"  # the grasp point between the fingers; its z axis is the approach direction
CUBE = "cube"
CAMERAS = ("front", "wrist")
TABLE_TOP = 0.40  # m above the floor
CUBE_HALF = 0.02
BIN_CENTER = np.array([0.30, 0.30])
BIN_HALF = 0.09
GRIPPER_OPEN = 0.04
HOME = np.array([0.0, 0.45, 1.35, 1.34, 0.0, 0.0, GRIPPER_OPEN])  # joints (rad), gripper (m)
_FRONT_EYE, _FRONT_TARGET = np.array([1.1, 0.05, 0.9]), np.array([0.28, 0.06, 0.5])


@dataclass(frozen=True)
class CubePose:
    """Where the cube starts: x, y on the table (m) and yaw about the vertical (rad)."""

    x: float = 0.42
    y: float = -0.10
    yaw: float = 0.0

    def qpos(self) -> Floats:
        """The cube's free-joint coordinates: position and a wxyz quaternion (MuJoCo's order)."""
        half = self.yaw / 2
        return np.array([self.x, self.y, TABLE_TOP + CUBE_HALF, np.cos(half), 0.0, 0.0, np.sin(half)])


def _xyaxes(forward: Floats, up: Floats) -> str:
    """MJCF `xyaxes` of a camera looking along `forward` with `up` roughly up (MuJoCo looks along −Z)."""
    f = forward / np.linalg.norm(forward)
    right = np.cross(f, up)
    right /= np.linalg.norm(right)
    return " ".join(f"{v:.6f}" for v in (*right, *np.cross(right, f)))


def _vec(v: Floats | tuple[float, ...]) -> str:
    return " ".join(f"{float(x):.6g}" for x in v)


def _bin_geoms() -> str:
    """The bin's floor and four walls (5 mm thick, 6 cm high) around its centre."""
    h, t, wall = BIN_HALF, 0.005, 0.03
    boxes = [((0, 0, t), (h, h, t)), ((h, 0, wall), (t, h, wall)), ((-h, 0, wall), (t, h, wall)),
             ((0, h, wall), (h, t, wall)), ((0, -h, wall), (h, t, wall))]
    return "\n".join(f'      <geom class="bin" pos="{_vec(p)}" size="{_vec(s)}"/>' for p, s in boxes)


def scene_xml(cube: CubePose = CubePose(), offscreen: tuple[int, int] = (640, 480)) -> str:
    """The MJCF text of the scene with the cube at `cube`; `offscreen` is the largest image size to render."""
    wrist_look = _xyaxes(np.array([-0.25, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]))
    front_look = _xyaxes(_FRONT_TARGET - _FRONT_EYE, np.array([0.0, 0.0, 1.0]))
    return f"""<mujoco model="robokit_pick_place">
  <compiler angle="radian" autolimits="true"/>
  <option timestep="0.002" integrator="implicitfast" cone="elliptic" impratio="10"/>
  <visual>
    <global offwidth="{offscreen[0]}" offheight="{offscreen[1]}"/>
    <headlight diffuse="0.5 0.5 0.5" ambient="0.35 0.35 0.35" specular="0 0 0"/>
    <quality shadowsize="512"/>
  </visual>
  <asset>
    <texture name="sky" type="skybox" builtin="gradient" rgb1="0.55 0.65 0.75" rgb2="0.2 0.22 0.25" width="64"
             height="384"/>
    <texture name="grid" type="2d" builtin="checker" rgb1="0.25 0.3 0.35" rgb2="0.2 0.24 0.28" width="64" height="64"/>
    <material name="floor" texture="grid" texrepeat="12 12"/>
    <material name="wood" rgba="0.62 0.48 0.33 1"/>
    <material name="metal" rgba="0.72 0.74 0.78 1"/>
    <material name="dark" rgba="0.15 0.15 0.17 1"/>
  </asset>
  <default>
    <default class="world">
      <geom contype="1" conaffinity="3" friction="1 0.005 0.0001"/>
      <default class="bin"><geom type="box" rgba="0.2 0.45 0.8 1"/></default>
    </default>
    <default class="arm">
      <joint armature="0.05" damping="2"/>
      <geom contype="2" conaffinity="1" material="metal"/>
      <position kp="600" dampratio="1" forcerange="-150 150"/>
      <default class="finger">
        <joint type="slide" range="0 {GRIPPER_OPEN}" armature="0.01" damping="5"/>
        <geom type="box" size="0.012 0.006 0.03" material="dark" friction="1.5 0.02 0.001" condim="4"/>
      </default>
    </default>
  </default>
  <worldbody>
    <light name="sun" pos="0.3 -0.4 2.5" dir="-0.1 0.15 -1" directional="true" diffuse="0.7 0.7 0.7"/>
    <geom name="floor" type="plane" size="3 3 0.05" material="floor" class="world"/>
    <camera name="front" pos="{_vec(_FRONT_EYE)}" xyaxes="{front_look}" fovy="55"/>
    <body name="table" pos="0.35 0 {TABLE_TOP / 2}">
      <geom name="table_top" class="world" type="box" size="0.55 0.5 {TABLE_TOP / 2}" material="wood"/>
    </body>
    <body name="bin" pos="{BIN_CENTER[0]} {BIN_CENTER[1]} {TABLE_TOP}" childclass="world">
{_bin_geoms()}
    </body>
    <body name="base_link" pos="0 0 {TABLE_TOP}" childclass="arm">
      <geom type="cylinder" size="0.075 0.03" pos="0 0 0.03" material="dark"/>
      <body name="shoulder_link" pos="0 0 0.06" gravcomp="1">
        <joint name="shoulder_pan" axis="0 0 1" range="-3.14 3.14" actuatorgravcomp="true"/>
        <geom type="cylinder" size="0.055 0.04" pos="0 0 0.04"/>
        <body name="upper_arm_link" pos="0 0 0.1" gravcomp="1">
          <joint name="shoulder_lift" axis="0 1 0" range="-2 2" actuatorgravcomp="true"/>
          <geom type="capsule" fromto="0 0 0 0 0 0.32" size="0.04"/>
          <body name="forearm_link" pos="0 0 0.32" gravcomp="1">
            <joint name="elbow" axis="0 1 0" range="-0.2 2.8" actuatorgravcomp="true"/>
            <geom type="capsule" fromto="0 0 0 0 0 0.28" size="0.034"/>
            <body name="wrist_1_link" pos="0 0 0.28" gravcomp="1">
              <joint name="wrist_1" axis="0 1 0" range="-0.5 3.0" actuatorgravcomp="true"/>
              <geom type="capsule" fromto="0 0 0 0 0 0.05" size="0.03"/>
              <body name="wrist_2_link" pos="0 0 0.06" gravcomp="1">
                <joint name="wrist_2" axis="1 0 0" range="-1.6 1.6" actuatorgravcomp="true"/>
                <geom type="sphere" size="0.03"/>
                <body name="wrist_3_link" pos="0 0 0.03" gravcomp="1">
                  <joint name="wrist_3" axis="0 0 1" range="-3.14 3.14" actuatorgravcomp="true"/>
                  <geom type="cylinder" size="0.03 0.01" pos="0 0 0.01" material="dark"/>
                  <geom type="box" size="0.025 0.065 0.015" pos="0 0 0.065"/>
                  <camera name="wrist" pos="0.06 0 0.075" xyaxes="{wrist_look}" fovy="75"/>
                  <site name="{TOOL_SITE}" pos="0 0 0.12" size="0.005" rgba="0 1 0 0"/>
                  <body name="{FINGERS[0]}" pos="0 0 0.08" gravcomp="1" childclass="finger">
                    <joint name="{FINGERS[0]}" axis="0 1 0"/>
                    <geom pos="0 0.006 0.03"/>
                  </body>
                  <body name="{FINGERS[1]}" pos="0 0 0.08" gravcomp="1" childclass="finger">
                    <joint name="{FINGERS[1]}" axis="0 -1 0"/>
                    <geom pos="0 -0.006 0.03"/>
                  </body>
                </body>
              </body>
            </body>
          </body>
        </body>
      </body>
    </body>
    <body name="{CUBE}" pos="{_vec(cube.qpos()[:3])}" quat="{_vec(cube.qpos()[3:])}">
      <freejoint name="{CUBE}"/>
      <geom name="{CUBE}" class="world" type="box" size="{CUBE_HALF} {CUBE_HALF} {CUBE_HALF}" mass="0.05"
            rgba="0.85 0.1 0.1 1" condim="4" friction="1.2 0.02 0.001"/>
    </body>
  </worldbody>
  <contact>
    <exclude body1="{FINGERS[0]}" body2="{FINGERS[1]}"/>
  </contact>
  <tendon>
    <fixed name="{GRIPPER}">
      <joint joint="{FINGERS[0]}" coef="0.5"/>
      <joint joint="{FINGERS[1]}" coef="0.5"/>
    </fixed>
  </tendon>
  <equality>
    <joint joint1="{FINGERS[0]}" joint2="{FINGERS[1]}" solimp="0.95 0.99 0.001" solref="0.005 1"/>
  </equality>
  <actuator>
{chr(10).join(f'    <position class="arm" name="{j}" joint="{j}"/>' for j in ARM_JOINTS)}
    <position class="arm" name="{GRIPPER}" tendon="{GRIPPER}" kp="300" forcerange="-15 15"
              ctrlrange="0 {GRIPPER_OPEN}"/>
  </actuator>
  <keyframe>
    <key name="home" qpos="{_vec((*HOME[:6], GRIPPER_OPEN, GRIPPER_OPEN, *cube.qpos()))}"
         ctrl="{_vec(HOME)}"/>
  </keyframe>
</mujoco>
"""
