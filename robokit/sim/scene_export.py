"""The simulator's scene as a `converters.scene.Scene`, so the MJCF and USD scene writers export it like any scene.

Every geom of a body outside the arm becomes an object (one per geom, all primitives, so a convex hull is
exact): static when its body is welded to the world, dynamic with the body's mass when it has a free joint.
The floor plane becomes the ground, world-fixed cameras keep their pose and fovy-derived intrinsics, and the
directional light stays a distant light. The arm is articulated, which a Scene cannot hold, so it is left out
with that reason (the recording's scene.xml keeps it); so is the wrist camera it carries.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import numpy.typing as npt
import trimesh
from scipy.spatial.transform import Rotation

from robokit import frames
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.registry import SceneWriter, WriteResult
from robokit.converters.scene import GroundPlane, Pose, Scene, SceneCamera, SceneLight, SceneMeta, SceneObject
from robokit.errors import SimError
from robokit.sim.arm import compile_model
from robokit.sim.scene import scene_xml
from robokit.timeline import CameraInfo, PoseStream

SCENE_FORMATS = ("mjcf", "usd")
_ARM_ROOT = "base_link"


_PRIMITIVES: dict[int, Callable[[npt.NDArray[np.float64]], trimesh.Trimesh]] = {
    int(mujoco.mjtGeom.mjGEOM_BOX): lambda size: trimesh.creation.box(extents=2 * size),
    int(mujoco.mjtGeom.mjGEOM_SPHERE): lambda size: trimesh.creation.icosphere(subdivisions=2, radius=size[0]),
    int(mujoco.mjtGeom.mjGEOM_CYLINDER): lambda size: trimesh.creation.cylinder(radius=size[0], height=2 * size[1],
                                                                              sections=32),
    int(mujoco.mjtGeom.mjGEOM_CAPSULE): lambda size: trimesh.creation.capsule(height=2 * size[1], radius=size[0],
                                                                            count=[16, 16]),
}


def _primitive(kind: int, size: Any) -> trimesh.Trimesh | None:
    """A mesh of a MuJoCo primitive geom in its own frame, None for types without one (planes, meshes)."""
    build = _PRIMITIVES.get(kind)
    return None if build is None else build(np.asarray(size, dtype=np.float64))


def _name(model: Any, kind: Any, index: int, default: str) -> str:
    return mujoco.mj_id2name(model, kind, index) or default


def _color(model: Any, geom: int) -> tuple[float, float, float]:
    rgba = model.mat_rgba[model.geom_matid[geom]] if model.geom_matid[geom] >= 0 else model.geom_rgba[geom]
    return float(rgba[0]), float(rgba[1]), float(rgba[2])


def _objects(model: Any, data: Any, scene: Scene) -> None:
    """One SceneObject per primitive geom outside the arm; the floor plane as the ground."""
    arm = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, _ARM_ROOT)
    scene.skipped.append((_ARM_ROOT, "the articulated arm: a robokit scene has no joints (scene.xml keeps it)"))
    for body in range(1, model.nbody):
        if model.body_rootid[body] == arm:
            continue
        joints = range(model.body_jntadr[body], model.body_jntadr[body] + model.body_jntnum[body])
        kinds = {int(model.jnt_type[j]) for j in joints}
        name = _name(model, mujoco.mjtObj.mjOBJ_BODY, body, f"body_{body}")
        if kinds - {mujoco.mjtJoint.mjJNT_FREE}:
            scene.skipped.append((name, "a jointed body: only static and free bodies are scene objects"))
            continue
        geoms = [g for g in range(model.ngeom) if model.geom_bodyid[g] == body]
        for k, g in enumerate(geoms):
            mesh = _primitive(int(model.geom_type[g]), model.geom_size[g])
            label = name if len(geoms) == 1 else f"{name}_{k}"
            if mesh is None:
                scene.skipped.append((label, f"geom type {mujoco.mjtGeom(model.geom_type[g]).name} has no mesh"))
                continue
            pose = Pose(data.geom_xpos[g].copy(), Rotation.from_matrix(data.geom_xmat[g].reshape(3, 3)).as_quat())
            scene.objects.append(SceneObject(label, mesh, pose, dynamic=bool(kinds), collision="convex-hull",
                                             mass=float(model.body_mass[body]) if kinds else None,
                                             color=_color(model, g), source="robokit sim"))
    planes = [g for g in range(model.ngeom)
              if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE and model.geom_bodyid[g] == 0]
    scene.ground = GroundPlane(float(data.geom_xpos[planes[0]][2]), float(2 * model.geom_size[planes[0]][0]) or 20.0) \
        if planes else None


def _cameras(model: Any, data: Any, scene: Scene, width: int, height: int) -> None:
    """World-fixed cameras in robokit's convention (OpenCV axes); cameras on moving bodies are left out."""
    for cam in range(model.ncam):
        name = _name(model, mujoco.mjtObj.mjOBJ_CAMERA, cam, f"camera_{cam}")
        if model.cam_bodyid[cam] != 0:
            scene.skipped.append((name, "a camera on a moving body"))
            continue
        t, q = frames.convert_poses(data.cam_xpos[cam], Rotation.from_matrix(data.cam_xmat[cam].reshape(3, 3))
                                    .as_quat(), "mujoco", "rayform", camera=True)
        poses = PoseStream(f"{name}/pose", np.zeros(1, dtype=np.int64), translation=t[None], quaternion=q[None],
                           parent_frame="world", child_frame=name, convention="rayform", static=True, is_camera=True)
        info = CameraInfo.from_fov(width, height, float(model.cam_fovy[cam]), frame_id=name)
        scene.cameras.append(SceneCamera(name, info, poses, source="robokit sim"))


def sim_scene(width: int = 640, height: int = 480) -> Scene:
    """The built-in scene (cube at its nominal place) as a Scene; cameras get `width`×`height` intrinsics."""
    model = compile_model(scene_xml(offscreen=(max(640, width), max(480, height))))
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
    mujoco.mj_forward(model, data)
    scene = Scene(SceneMeta(name="robokit_pick_place", sources=("robokit sim",), convention="rayform"))
    _objects(model, data, scene)
    _cameras(model, data, scene, width, height)
    for light in range(model.nlight):
        if model.light_type[light] == mujoco.mjtLightType.mjLIGHT_DIRECTIONAL:
            scene.lights.append(SceneLight(_name(model, mujoco.mjtObj.mjOBJ_LIGHT, light, f"light_{light}"),
                                           "distant", direction=data.light_xdir[light].copy()))
    return scene


def export_scene(out_dir: Path, formats: Sequence[str] = SCENE_FORMATS,
                 overwrite: bool = False) -> dict[str, WriteResult]:
    """Write the simulator's scene as `out_dir/<format>/` with the scene writers (MJCF, USD)."""
    writers = {f: w for f in formats if isinstance(w := get_converter(f), SceneWriter)}
    unknown = [f for f in formats if f not in writers]
    if unknown:
        raise SimError(f"{', '.join(unknown)}: not a scene format; scene formats: {', '.join(SCENE_FORMATS)}")
    scene = sim_scene()
    options = WriterOptions(overwrite=overwrite)
    return {name: writer.write_scene(scene, out_dir, options) for name, writer in writers.items()}
