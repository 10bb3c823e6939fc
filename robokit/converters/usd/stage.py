"""Authoring of the USD stage: metadata, splats (UsdVol), meshes with UsdPhysics colliders, cameras, lights.

Layout: `/World` (defaultPrim) holds GroundPlane, Objects/<name>/{visual, collision/piece_NNN}, Splats/<name>,
Cameras/<name> and Lights/<name>; `/PhysicsScene` sits beside it so referencing `/World` into another stage
(Isaac Lab) does not bring a second physics scene.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import trimesh
from pxr import Gf, Usd, UsdGeom, UsdLux, UsdPhysics, UsdVol, Vt
from scipy.spatial.transform import Rotation

from robokit.converters.prepare import estimate_rate
from robokit.converters.scene.model import Pose, SceneCamera, SceneLight, SplatSet
from robokit.converters.scene.ply import SH_C0
from robokit.converters.scene.prepare import PreparedObject
from robokit.frames import convert_pose_stream

CONVENTION = "isaac"  # Z-up FLU world, USD camera axes (x right, y up, looking along −Z)
DISTANT_INTENSITY = 1000.0  # UsdLux intensity of a light with intensity 1 (approximate daylight in Isaac Sim)
SPHERE_INTENSITY = 30000.0
DOME_INTENSITY = 300.0
_APPROXIMATION = {"convex-hull": UsdPhysics.Tokens.convexHull, "convex-decomposition": UsdPhysics.Tokens.convexHull,
                  "mesh": UsdPhysics.Tokens.none}


def new_stage(path: Path, metadata: dict[str, Any]) -> tuple[Usd.Stage, UsdGeom.Xform]:
    """A Z-up, metre, kilogram stage with `/World` as default prim, `/PhysicsScene` and robokit metadata."""
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdPhysics.SetStageKilogramsPerUnit(stage, 1.0)
    world = UsdGeom.Xform.Define(stage, "/World")
    stage.SetDefaultPrim(world.GetPrim())
    physics = UsdPhysics.Scene.Define(stage, "/PhysicsScene")
    physics.CreateGravityDirectionAttr(Gf.Vec3f(0.0, 0.0, -1.0))
    physics.CreateGravityMagnitudeAttr(9.81)
    stage.GetRootLayer().customLayerData = {"robokit": {
        k: Vt.StringArray([str(x) for x in v]) if isinstance(v, list | tuple) else v for k, v in metadata.items()}}
    return stage, world


def set_pose(prim: Usd.Prim, pose: Pose) -> None:
    """Translate + orient ops (no scale, so colliders stay uniformly scaled)."""
    xf = UsdGeom.Xformable(prim)
    xf.AddTranslateOp().Set(Gf.Vec3d(*map(float, pose.translation)))
    x, y, z, w = map(float, pose.quaternion)
    xf.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Quatd(w, x, y, z))


def add_mesh(stage: Usd.Stage, path: str, mesh: trimesh.Trimesh, color: tuple[float, float, float] | None = None
             ) -> UsdGeom.Mesh:
    """A triangle Mesh prim (points, indices, extent, optional display colour)."""
    prim = UsdGeom.Mesh.Define(stage, path)
    points = np.ascontiguousarray(mesh.vertices, dtype=np.float32)
    prim.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(points))
    prim.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.full(len(mesh.faces), 3, dtype=np.int32)))
    prim.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(np.ascontiguousarray(mesh.faces, np.int32).ravel()))
    prim.CreateExtentAttr(Vt.Vec3fArray.FromNumpy(np.stack([points.min(axis=0), points.max(axis=0)])))
    prim.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
    if color is not None:
        prim.CreateDisplayColorPrimvar(UsdGeom.Tokens.constant).Set(Vt.Vec3fArray([Gf.Vec3f(*color)]))
    return prim


def _collider(mesh: UsdGeom.Mesh, approximation: str) -> None:
    UsdPhysics.CollisionAPI.Apply(mesh.GetPrim())
    UsdPhysics.MeshCollisionAPI.Apply(mesh.GetPrim()).CreateApproximationAttr(approximation)


def add_object(stage: Usd.Stage, parent: str, item: PreparedObject, pose: Pose) -> None:
    """An object Xform: visual mesh, collision pieces (guide purpose), rigid body and mass when dynamic."""
    obj = item.obj
    root = UsdGeom.Xform.Define(stage, f"{parent}/{obj.name}")
    set_pose(root.GetPrim(), pose)
    root.GetPrim().SetCustomDataByKey("robokit:source", obj.source)
    exact_on_visual = item.shapes.mode == "mesh" and obj.collision_mesh is None and obj.visual is not None
    if obj.visual is not None:
        visual = add_mesh(stage, f"{root.GetPath()}/visual", obj.visual, obj.color)
        if exact_on_visual:
            _collider(visual, UsdPhysics.Tokens.none)
    if not exact_on_visual:
        group = UsdGeom.Xform.Define(stage, f"{root.GetPath()}/collision")
        group.CreatePurposeAttr(UsdGeom.Tokens.guide)
        approximation = _APPROXIMATION[item.shapes.mode]
        for i, piece in enumerate(item.shapes.pieces):
            _collider(add_mesh(stage, f"{group.GetPath()}/piece_{i:03d}", piece), approximation)
    if obj.dynamic and item.mass is not None:
        UsdPhysics.RigidBodyAPI.Apply(root.GetPrim())
        mass = UsdPhysics.MassAPI.Apply(root.GetPrim())
        mass.CreateMassAttr(item.mass.mass)
        mass.CreateCenterOfMassAttr(Gf.Vec3f(*map(float, item.mass.center)))
        moments, axes = np.linalg.eigh(item.mass.inertia)
        if np.linalg.det(axes) < 0:
            axes[:, 2] *= -1
        mass.CreateDiagonalInertiaAttr(Gf.Vec3f(*map(float, np.maximum(moments, 1e-9))))
        x, y, z, w = Rotation.from_matrix(axes).as_quat()
        mass.CreatePrincipalAxesAttr(Gf.Quatf(float(w), float(x), float(y), float(z)))


def add_ground(stage: Usd.Stage, parent: str, height: float, size: float) -> None:
    """A static collision plane (UsdGeom.Plane, normal +Z) at `height`, rendered `size` metres wide."""
    root = UsdGeom.Xform.Define(stage, f"{parent}/GroundPlane")
    set_pose(root.GetPrim(), Pose(np.array([0.0, 0.0, height])))
    plane = UsdGeom.Plane.Define(stage, f"{root.GetPath()}/CollisionPlane")
    plane.CreateAxisAttr(UsdGeom.Tokens.z)
    plane.CreateWidthAttr(size)
    plane.CreateLengthAttr(size)
    plane.CreateExtentAttr(Vt.Vec3fArray([Gf.Vec3f(-size / 2, -size / 2, 0), Gf.Vec3f(size / 2, size / 2, 0)]))
    plane.CreateDisplayColorPrimvar(UsdGeom.Tokens.constant).Set(Vt.Vec3fArray([Gf.Vec3f(0.5, 0.5, 0.5)]))
    UsdPhysics.CollisionAPI.Apply(plane.GetPrim())


def add_splat(stage: Usd.Stage, parent: str, splats: SplatSet, pose: Pose) -> UsdVol.ParticleField3DGaussianSplat:
    """A ParticleField3DGaussianSplat with every attribute (linear scales, opacities, unit quaternions, SH)."""
    gs = UsdVol.ParticleField3DGaussianSplat.Define(stage, f"{parent}/{splats.name}")
    set_pose(gs.GetPrim(), pose)
    positions = np.ascontiguousarray(splats.positions, dtype=np.float32)
    scales = np.ascontiguousarray(splats.scales, dtype=np.float32)
    gs.CreatePositionsAttr(Vt.Vec3fArray.FromNumpy(positions))
    gs.CreateOrientationsAttr(Vt.QuatfArray.FromNumpy(np.ascontiguousarray(splats.orientations, np.float32)))
    gs.CreateScalesAttr(Vt.Vec3fArray.FromNumpy(scales))
    gs.CreateOpacitiesAttr(Vt.FloatArray.FromNumpy(np.ascontiguousarray(splats.opacities, np.float32)))
    gs.CreateRadianceSphericalHarmonicsDegreeAttr(int(splats.sh_degree))
    coefficients = gs.CreateRadianceSphericalHarmonicsCoefficientsAttr(
        Vt.Vec3fArray.FromNumpy(np.ascontiguousarray(splats.sh.reshape(-1, 3), np.float32)))
    coefficients.SetMetadata("elementSize", (splats.sh_degree + 1) ** 2)
    reach = 3.0 * scales.max(axis=1, keepdims=True)
    gs.CreateExtentAttr(Vt.Vec3fArray.FromNumpy(
        np.stack([(positions - reach).min(axis=0), (positions + reach).max(axis=0)]).astype(np.float32)))
    Usd.ColorSpaceAPI.Apply(gs.GetPrim()).CreateColorSpaceNameAttr("srgb_rec709_display")
    rgb = np.clip(0.5 + SH_C0 * splats.sh[:, 0, :], 0.0, 1.0).astype(np.float32)
    gs.CreateDisplayColorPrimvar(UsdGeom.Tokens.vertex).Set(Vt.Vec3fArray.FromNumpy(rgb))
    gs.GetPrim().SetCustomDataByKey("robokit:source", splats.source)
    return gs


def camera_clock(cameras: list[SceneCamera]) -> tuple[int, float]:
    """(start ns, time codes per second) shared by the animated cameras: their earliest sample, fastest rate."""
    animated = [c.poses for c in cameras if c.animated]
    if not animated:
        return 0, 30.0
    rate = max(estimate_rate(p) for p in animated)
    return min(p.start_ns for p in animated), float(round(rate) or 30.0)


def add_camera(stage: Usd.Stage, parent: str, camera: SceneCamera, start_ns: int, codes_per_second: float
               ) -> float:
    """A Camera prim from pinhole intrinsics, time-sampled when it follows a trajectory; returns its last code."""
    cam = UsdGeom.Camera.Define(stage, f"{parent}/{camera.name}")
    k, w, h = camera.intrinsics.k, camera.intrinsics.width, camera.intrinsics.height
    pitch = 20.955 / w  # aperture units per pixel: a 20.955 mm-wide film, USD's default
    fx, fy, cx, cy = float(k[0, 0]), float(k[1, 1]), float(k[0, 2]), float(k[1, 2])
    cam.CreateProjectionAttr(UsdGeom.Tokens.perspective)
    cam.CreateFocalLengthAttr(fx * pitch)
    cam.CreateHorizontalApertureAttr(w * pitch)
    cam.CreateVerticalApertureAttr(h * pitch * fx / fy)
    cam.CreateHorizontalApertureOffsetAttr(((w - 1) / 2 - cx) * pitch)
    cam.CreateVerticalApertureOffsetAttr((cy - (h - 1) / 2) * pitch * fx / fy)
    cam.CreateClippingRangeAttr(Gf.Vec2f(0.01, 1000.0))
    cam.GetPrim().SetCustomDataByKey("robokit:source", camera.source)
    cam.GetPrim().SetCustomDataByKey("robokit:resolution", Gf.Vec2i(w, h))
    poses = convert_pose_stream(camera.poses, CONVENTION)
    xf = UsdGeom.Xformable(cam.GetPrim())
    translate, orient = xf.AddTranslateOp(), xf.AddOrientOp(UsdGeom.XformOp.PrecisionDouble)
    codes = (poses.timestamps - start_ns) / 1e9 * codes_per_second
    for i in range(len(poses)):
        time = Usd.TimeCode(float(codes[i])) if camera.animated else Usd.TimeCode.Default()
        x, y, z, qw = map(float, poses.quaternion[i])
        translate.Set(Gf.Vec3d(*map(float, poses.translation[i])), time)
        orient.Set(Gf.Quatd(qw, x, y, z), time)
    return float(codes[-1]) if camera.animated else 0.0


def add_light(stage: Usd.Stage, parent: str, light: SceneLight, direction: npt.NDArray[np.float64],
              position: npt.NDArray[np.float64]) -> None:
    """A DistantLight aimed along `direction` (its −Z) or a SphereLight at `position`."""
    color = Gf.Vec3f(*light.color)
    if light.kind == "distant":
        lux: UsdLux.DistantLight | UsdLux.SphereLight = UsdLux.DistantLight.Define(stage, f"{parent}/{light.name}")
        lux.CreateIntensityAttr(DISTANT_INTENSITY * light.intensity)
        aim = Rotation.align_vectors([direction / np.linalg.norm(direction)], [[0.0, 0.0, -1.0]])[0]
        set_pose(lux.GetPrim(), Pose(np.zeros(3), aim.as_quat()))
    else:
        lux = UsdLux.SphereLight.Define(stage, f"{parent}/{light.name}")
        lux.CreateIntensityAttr(SPHERE_INTENSITY * light.intensity)
        lux.CreateRadiusAttr(0.05)
        set_pose(lux.GetPrim(), Pose(position))
    lux.CreateColorAttr(color)


def add_dome(stage: Usd.Stage, parent: str) -> None:
    """Ambient sky light, so splats and meshes are lit from every side."""
    UsdLux.DomeLight.Define(stage, f"{parent}/dome").CreateIntensityAttr(DOME_INTENSITY)

