"""Record scripted pick-and-place episodes in the built-in scene as ROS 2 bags (MCAP storage).

Per episode `<out>/episode_NNN/`: /joint_states (100 Hz: positions, velocities, efforts), /joint_commands
(the action), /camera/front/image_raw (rgb8, 30 Hz), /camera/wrist/image_raw/compressed (JPEG, 15 Hz), both
camera_info (K from MuJoCo's fovy), /tf (tool0 and cube in world, 50 Hz), /tf_static (base_link and the
camera optical frames, converted from MuJoCo's camera axes), /task; and `scene.xml`, the episode's MJCF
with the cube where it starts. `<out>/scene.xml` is the same model with the cube at its nominal place.
Header stamps are simulation times; log times lag them by 1–3 ms, as a recorder's receive time does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import numpy.typing as npt
from scipy.spatial.transform import Rotation

from robokit import frames
from robokit.errors import OptionError, RobokitError
from robokit.limits import MAX_EPISODES
from robokit.ros.bagwriter import (
    START_NS,
    BagWriter,
    Typestore,
    camera_info,
    header,
    joint_state,
    jpeg_image,
    raw_image,
    text,
    tf_message,
    transform,
    typestore,
)
from robokit.sim.arm import Arm, compile_model
from robokit.sim.gl import offscreen_renderer
from robokit.sim.ik import Kinematics
from robokit.sim.policy import TASK, ScriptedPolicy, home_pose, plan_episode
from robokit.sim.scene import BIN_CENTER, BIN_HALF, CUBE, HOME, JOINTS, TABLE_TOP, TOOL_SITE, scene_xml

Floats = npt.NDArray[np.float64]
SCENE_FILE = "scene.xml"
WORLD, BASE = "world", "base_link"
_MAX_SIZE = 4096


@dataclass(frozen=True)
class RecordSpec:
    """What to record: seconds per episode, image size, seed and topic rates (Hz)."""

    duration_s: float = 6.0
    width: int = 160
    height: int = 120
    seed: int = 0
    joint_hz: float = 100.0
    tf_hz: float = 50.0
    front_hz: float = 30.0
    wrist_hz: float = 15.0

    def check(self) -> None:
        """OptionError naming the first value out of range."""
        if not 0.5 <= self.duration_s <= 600:
            raise OptionError(f"duration {self.duration_s:g} s: expected 0.5 to 600 seconds")
        if not (0 < self.width <= _MAX_SIZE and 0 < self.height <= _MAX_SIZE):
            raise OptionError(f"image size {self.width}x{self.height}: width and height must be 1 to {_MAX_SIZE}")
        for name in ("joint_hz", "tf_hz", "front_hz", "wrist_hz"):
            if not 0 < getattr(self, name) <= 500:
                raise OptionError(f"{name} {getattr(self, name):g}: expected 0 to 500 Hz (the physics runs at 500 Hz)")


@dataclass(frozen=True)
class RecordedEpisode:
    """One written episode: its bag folder, where the cube started and ended, whether it landed in the bin."""

    path: Path
    cube_start: Floats
    cube_end: Floats
    placed: bool
    seconds: float


def _ticks(hz: float, steps: int, dt: float) -> npt.NDArray[np.bool_]:
    """Which of `steps` + 1 physics steps a `hz` topic publishes on (nearest step to each nominal time)."""
    marks = np.zeros(steps + 1, dtype=bool)
    marks[np.unique(np.round(np.arange(0, steps * dt + 1e-9, 1.0 / hz) / dt).astype(np.int64))] = True
    return marks


def _pose(xpos: Floats, xmat: Floats) -> tuple[Floats, Floats]:
    return np.array(xpos, dtype=np.float64), Rotation.from_matrix(np.reshape(xmat, (3, 3))).as_quat()


def _relative(parent: tuple[Floats, Floats], child: tuple[Floats, Floats]) -> tuple[Floats, Floats]:
    """`child` expressed in `parent` (both world poses: translation, xyzw)."""
    inv = Rotation.from_quat(parent[1]).inv()
    return inv.apply(child[0] - parent[0]), (inv * Rotation.from_quat(child[1])).as_quat()


class _Episode:
    """The simulation of one episode and the messages it publishes."""

    def __init__(self, model: Any, renderer: Any, spec: RecordSpec, episode: int) -> None:
        self.model, self.renderer, self.spec = model, renderer, spec
        self.data = mujoco.MjData(model)
        self.arm = Arm.of(model, JOINTS)
        self.kin = Kinematics(model)
        self.rng = np.random.default_rng([spec.seed, episode])
        self.lags = np.random.default_rng([spec.seed, episode, 1])
        self.start = START_NS + episode * 60_000_000_000
        self.plan = plan_episode(self.rng, spec.duration_s, home_pose(self.kin))
        self.policy = ScriptedPolicy(self.kin, self.plan, self.rng)
        mujoco.mj_resetDataKeyframe(model, self.data, model.key("home").id)
        self.cube_qpos = slice(self.arm.cube_qpos, self.arm.cube_qpos + 7)
        self.data.qpos[self.cube_qpos] = self.plan.cube.qpos()
        self.arm.set_state(self.data, HOME)

    def _lag(self) -> int:
        return int(self.lags.integers(1_000_000, 3_000_000))

    def _camera(self, name: str) -> tuple[Floats, Floats]:
        """The camera's optical frame (ROS: x right, y down, z forward) in the world."""
        cam = self.model.camera(name).id
        t, q = _pose(self.data.cam_xpos[cam], self.data.cam_xmat[cam])
        return frames.convert_poses(t, q, "mujoco", "ros", camera=True)

    def _static(self, ts: Typestore) -> Any:
        """world → base_link, world → front optical frame, tool0 → wrist optical frame."""
        base = self.data.body(BASE)
        tool = _pose(self.data.site(TOOL_SITE).xpos, self.data.site(TOOL_SITE).xmat)
        poses = {BASE: (WORLD, _pose(base.xpos, base.xmat)),
                 "front_camera_optical": (WORLD, self._camera("front")),
                 "wrist_camera_optical": (TOOL_SITE, _relative(tool, self._camera("wrist")))}
        return tf_message(ts, [transform(ts, self.start, parent, child, t, q)
                               for child, (parent, (t, q)) in poses.items()])

    def _image(self, ts: Typestore, bag: BagWriter, cam: str, stamp: int) -> None:
        self.renderer.update_scene(self.data, camera=cam)
        pixels = self.renderer.render()
        frame_id = f"{cam}_camera_optical"
        hdr = header(ts, stamp, frame_id)
        if cam == "front":
            bag.write(stamp + self._lag(), "/camera/front/image_raw", raw_image(ts, hdr, pixels))
        else:
            bag.write(stamp + self._lag(), f"/camera/{cam}/image_raw/compressed", jpeg_image(ts, hdr, pixels))
        fovy = float(self.model.cam_fovy[self.model.camera(cam).id])
        bag.write(stamp + self._lag(), f"/camera/{cam}/camera_info",
                  camera_info(ts, stamp, frame_id, self.spec.width, self.spec.height, fovy))

    def run(self, ts: Typestore, bag: BagWriter) -> None:
        """Step the physics for the episode's duration, publishing every topic on its ticks."""
        m, d, spec = self.model, self.data, self.spec
        dt = float(m.opt.timestep)
        steps = round(spec.duration_s / dt)
        ticks = {name: _ticks(hz, steps, dt) for name, hz in
                 (("joints", spec.joint_hz), ("tf", spec.tf_hz), ("front", spec.front_hz), ("wrist", spec.wrist_hz))}
        bag.write(self.start, "/tf_static", self._static(ts))
        bag.write(self.start, "/task", text(ts, TASK))
        dt_ns = round(dt * 1e9)
        for k in range(steps + 1):
            stamp = self.start + k * dt_ns
            mujoco.mj_step1(m, d)  # positions, velocities and poses at this step's time
            if ticks["joints"][k]:
                command = self.policy.command(k * dt)
                d.ctrl[self.arm.actuators] = command
                hdr = header(ts, stamp, BASE)
                bag.write(stamp + self._lag(), "/joint_states", joint_state(ts, hdr, JOINTS, *self.arm.state(d)))
                bag.write(stamp + self._lag(), "/joint_commands", joint_state(ts, hdr, JOINTS, command))
            if ticks["tf"][k]:
                tool = _pose(d.site(TOOL_SITE).xpos, d.site(TOOL_SITE).xmat)
                cube = _pose(d.body(CUBE).xpos, d.body(CUBE).xmat)
                bag.write(stamp + self._lag(), "/tf", tf_message(ts, [
                    transform(ts, stamp, WORLD, TOOL_SITE, *tool), transform(ts, stamp, WORLD, CUBE, *cube)]))
            for cam in ("front", "wrist"):
                if ticks[cam][k]:
                    self._image(ts, bag, cam, stamp)
            bag.advance(stamp)
            mujoco.mj_step2(m, d)

    def placed(self) -> bool:
        """True when the cube ended inside the bin."""
        x, y, z = self.data.qpos[self.cube_qpos][:3]
        return bool(np.all(np.abs(np.array([x, y]) - BIN_CENTER) < BIN_HALF) and z < TABLE_TOP + 0.06)


def record(out_dir: Path, episodes: int = 3, spec: RecordSpec = RecordSpec()) -> list[RecordedEpisode]:
    """Record `episodes` episodes as `out_dir/episode_NNN/` bags and write `out_dir/scene.xml`.

    Everything is checked before anything is written: the options, free episode folders, the model and an
    offscreen GL context (SimError saying how to get one).
    """
    if not 1 <= episodes <= MAX_EPISODES:
        raise OptionError(f"episodes {episodes}: expected 1 to {MAX_EPISODES}")
    spec.check()
    paths = [out_dir / f"episode_{i:03d}" for i in range(episodes)]
    if taken := [str(p) for p in paths if p.exists()]:
        raise RobokitError(f"{', '.join(taken)}: already exist; record into a new or empty folder")
    offscreen = (max(640, spec.width), max(480, spec.height))
    model = compile_model(scene_xml(offscreen=offscreen))
    renderer = offscreen_renderer(model, spec.width, spec.height)
    ts = typestore()
    results = []
    try:
        for i, path in enumerate(paths):
            began = time.perf_counter()
            episode = _Episode(model, renderer, spec, i)
            with BagWriter(path, ts) as bag:
                episode.run(ts, bag)
                (bag.folder / SCENE_FILE).write_text(scene_xml(episode.plan.cube, offscreen))
            results.append(RecordedEpisode(path, episode.plan.cube.qpos()[:3], episode.data.qpos[episode.cube_qpos][:3],
                                           episode.placed(), time.perf_counter() - began))
    finally:
        renderer.close()
    (out_dir / SCENE_FILE).write_text(scene_xml(offscreen=offscreen))
    return results
