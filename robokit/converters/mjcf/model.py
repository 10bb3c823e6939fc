"""The MJCF document, menagerie style: compiler/option/visual/default/asset first, then the worldbody.

A `visual` default class (no contacts, group 2, no mass) and a `collision` class (group 3); static objects
are bodies without joints, dynamic ones free bodies with an explicit inertial; one collision geom per
convex piece. Meshes go to `assets/` (OBJ for visuals, binary STL for collision pieces).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import trimesh

from robokit.converters.scene.model import Pose, SceneCamera, SceneLight
from robokit.converters.scene.prepare import PreparedObject
from robokit.frames import convert_pose_stream, to_order

CONVENTION = "mujoco"  # Z-up FLU world, camera looks along −Z with +Y up
ASSETS = "assets"
_MAX_HULL_VERTICES = 64


def fmt(values: npt.ArrayLike) -> str:
    """Numbers as MJCF text: space separated, shortest round-trip form."""
    return " ".join(f"{float(v):.9g}" for v in np.asarray(values, dtype=np.float64).ravel())


@dataclass(frozen=True)
class Document:
    """The <mujoco> root and the elements writers fill in."""

    root: ET.Element
    statistic: ET.Element
    asset: ET.Element
    world: ET.Element


def skeleton(name: str) -> Document:
    """The <mujoco> root with compiler, option, visual, statistic, defaults and the ground textures."""
    root = ET.Element("mujoco", model=name)
    ET.SubElement(root, "compiler", angle="radian", meshdir=ASSETS, autolimits="true")
    ET.SubElement(root, "option", timestep="0.002", gravity="0 0 -9.81", integrator="implicitfast")
    visual = ET.SubElement(root, "visual")
    ET.SubElement(visual, "headlight", diffuse="0.6 0.6 0.6", ambient="0.3 0.3 0.3", specular="0 0 0")
    ET.SubElement(visual, "global", offwidth="1280", offheight="960")
    statistic = ET.SubElement(root, "statistic")
    default = ET.SubElement(root, "default")
    ET.SubElement(ET.SubElement(default, "default", {"class": "visual"}), "geom", type="mesh", contype="0",
                  conaffinity="0", group="2", density="0")
    ET.SubElement(ET.SubElement(default, "default", {"class": "collision"}), "geom", type="mesh", group="3")
    asset = ET.SubElement(root, "asset")
    ET.SubElement(asset, "texture", type="skybox", builtin="gradient", rgb1="0.3 0.5 0.7", rgb2="0 0 0",
                  width="512", height="3072")
    ET.SubElement(asset, "texture", type="2d", name="groundplane", builtin="checker", mark="edge",
                  rgb1="0.2 0.3 0.4", rgb2="0.1 0.2 0.3", markrgb="0.8 0.8 0.8", width="300", height="300")
    ET.SubElement(asset, "material", name="groundplane", texture="groundplane", texuniform="true",
                  texrepeat="5 5", reflectance="0.2")
    return Document(root, statistic, asset, ET.SubElement(root, "worldbody"))


def set_statistic(statistic: ET.Element, points: npt.NDArray[np.float64]) -> None:
    """Scene centre and extent (they scale the renderer's clip planes and the default view) from key points."""
    lo, hi = points.min(axis=0), points.max(axis=0)
    statistic.set("center", fmt((lo + hi) / 2))
    statistic.set("extent", fmt([max(1.0, float(np.linalg.norm(hi - lo)) / 2)]))


def add_floor(world: ET.Element, height: float) -> None:
    ET.SubElement(world, "geom", name="floor", type="plane", size="0 0 0.05", pos=fmt([0, 0, height]),
                  material="groundplane")


def add_light(world: ET.Element, light: SceneLight, direction: npt.NDArray[np.float64],
              position: npt.NDArray[np.float64]) -> None:
    """A directional light along `direction` (placed above the origin) or a light at `position`."""
    diffuse = np.clip(0.7 * light.intensity * np.asarray(light.color), 0.0, 1.0)
    if light.kind == "distant":
        pos = -3.0 * direction / np.linalg.norm(direction)
        ET.SubElement(world, "light", name=light.name, pos=fmt(pos), dir=fmt(direction), directional="true",
                      diffuse=fmt(diffuse), specular="0.1 0.1 0.1", castshadow="true")
    else:
        ET.SubElement(world, "light", name=light.name, pos=fmt(position), dir="0 0 -1", diffuse=fmt(diffuse))


def _write_mesh(folder: Path, stem: str, mesh: trimesh.Trimesh, visual: bool) -> str:
    """Write one mesh asset (OBJ for visuals, binary STL for collision) and return its file name."""
    if visual:
        name = f"{stem}.obj"
        text = trimesh.exchange.obj.export_obj(mesh, include_normals=False, include_color=False,
                                               include_texture=False, header=None)
        (folder / name).write_text(text)
    else:
        name = f"{stem}.stl"
        (folder / name).write_bytes(trimesh.exchange.stl.export_stl(mesh))
    return name


def add_object(asset: ET.Element, world: ET.Element, folder: Path, item: PreparedObject, pose: Pose) -> None:
    """Mesh assets, a material, and the body: visual geom plus one collision geom per piece."""
    obj = item.obj
    body = ET.SubElement(world, "body", name=obj.name, pos=fmt(pose.translation),
                         quat=fmt(to_order(pose.quaternion, "wxyz")))
    if obj.dynamic and item.mass is not None:
        ET.SubElement(body, "freejoint", name=f"{obj.name}_free")
        i = item.mass.inertia
        ET.SubElement(body, "inertial", pos=fmt(item.mass.center), mass=fmt([item.mass.mass]),
                      fullinertia=fmt([i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2]]))
    material: dict[str, str] = {}
    if obj.color is not None:
        ET.SubElement(asset, "material", name=f"{obj.name}_material", rgba=fmt([*obj.color, 1.0]))
        material = {"material": f"{obj.name}_material"}
    if obj.visual is not None:
        mesh = f"{obj.name}_visual"
        shell = {} if obj.visual.is_watertight else {"inertia": "shell"}
        ET.SubElement(asset, "mesh", {"name": mesh, "file": _write_mesh(folder, mesh, obj.visual, True), **shell})
        ET.SubElement(body, "geom", {"name": mesh, "class": "visual", "mesh": mesh, **material})
    for k, piece in enumerate(item.shapes.pieces):
        mesh = f"{obj.name}_collision_{k:03d}"
        ET.SubElement(asset, "mesh", name=mesh, file=_write_mesh(folder, mesh, piece, False),
                      maxhullvert=str(_MAX_HULL_VERTICES))
        ET.SubElement(body, "geom", {"name": mesh, "class": "collision", "mesh": mesh,
                                     **({"rgba": "0.5 0.5 0.5 0.3"} if obj.visual is not None else material)})


def camera_attributes(camera: SceneCamera) -> dict[str, str]:
    """Intrinsics as MJCF camera attributes (principalpixel is the offset from the image centre)."""
    k, w, h = camera.intrinsics.k, camera.intrinsics.width, camera.intrinsics.height
    principal = [(w - 1) / 2 - k[0, 2], (h - 1) / 2 - k[1, 2]]
    return {"resolution": f"{w} {h}", "focalpixel": fmt([k[0, 0], k[1, 1]]), "principalpixel": fmt(principal),
            "sensorsize": fmt([w * 1e-5, h * 1e-5])}


def add_camera(world: ET.Element, camera: SceneCamera) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """A fixed camera, or for a trajectory a mocap body carrying it at the first pose; returns (times, poses).

    `poses` rows are x y z qw qx qy qz in the MuJoCo convention; times in seconds from the first sample.
    """
    poses = convert_pose_stream(camera.poses, CONVENTION)
    wxyz = to_order(poses.quaternion, "wxyz")
    attrs = camera_attributes(camera)
    if camera.animated:
        body = ET.SubElement(world, "body", name=f"{camera.name}_mount", mocap="true",
                             pos=fmt(poses.translation[0]), quat=fmt(wxyz[0]))
        ET.SubElement(body, "camera", {"name": camera.name, **attrs})
    else:
        ET.SubElement(world, "camera", {"name": camera.name, "pos": fmt(poses.translation[0]), "quat": fmt(wxyz[0]),
                                        **attrs})
    times = (poses.timestamps - poses.timestamps[0]) / 1e9
    return times, np.hstack([poses.translation, wxyz])
