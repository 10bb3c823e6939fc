"""Scene description files (YAML or JSON): objects with mesh, pose, static/dynamic, mass, collision mode.

```yaml
name: tabletop
convention: rayform          # frame convention of every pose below (default rayform: Z up, X forward)
units: m                     # m, cm or mm: applied to positions, meshes and splats
ground: {height: 0.0}        # or false for no floor
splats: [{name: room, path: room.ply, pose: {position: [0, 0, 0], rpy_deg: [90, 0, 0]}}]
objects:
  - {name: table, mesh: meshes/table.obj, collision: mesh}
  - {name: cube, mesh: cube.stl, pose: {position: [0, 0, 1], orientation: [0, 0, 0, 1]}, dynamic: true, mass: 0.1}
cameras: [{name: overview, position: [2, 0, 1.5], look_at: [0, 0, 0.7], width: 640, height: 480, fov_deg: 60}]
lights: [{name: sun, type: distant, direction: [0.3, 0.2, -1], intensity: 1.0}]
```

Paths are relative to the file. Orientations are xyzw (`rpy_deg` is extrinsic roll, pitch, yaw in
degrees); camera orientations use the convention's camera axes. An object that cannot be read is
left out with the reason in `Scene.skipped`; the file itself must be a mapping with known keys.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import trimesh
from scipy.spatial.transform import Rotation

from robokit.converters.scene.meshes import clean_mesh, load_mesh
from robokit.converters.scene.model import (
    COLLISION_MODES,
    GroundPlane,
    Pose,
    Scene,
    SceneCamera,
    SceneLight,
    SceneMeta,
    SceneObject,
)
from robokit.converters.scene.ply import dropped_notes, read_splat_ply
from robokit.errors import RobokitError, SourceError
from robokit.frames import CONVENTIONS, camera_change
from robokit.frames.conventions import lookup
from robokit.sources.sniff import SCENE_KEYS, read_mapping
from robokit.timeline import CameraInfo, PoseStream

UNITS = {"m": 1.0, "cm": 0.01, "mm": 0.001}
TOP_KEYS = frozenset({"scene", "name", "convention", "units", "ground", "splat", "splats", "objects", "cameras",
                      "lights"})
_OBJECT_KEYS = frozenset({"name", "mesh", "collision_mesh", "pose", "scale", "dynamic", "mass", "density",
                          "collision", "color"})
_CAMERA_KEYS = frozenset({"name", "position", "orientation", "rpy_deg", "look_at", "width", "height", "fov_deg",
                          "fx", "fy", "cx", "cy"})
_LIGHT_KEYS = frozenset({"name", "type", "direction", "position", "intensity", "color"})


def read_description(path: Path) -> Scene:
    """The scene described by `path`; SourceError when the file is not a scene description."""
    data = read_mapping(path)
    if data is None or not SCENE_KEYS & set(data):
        raise SourceError(f"{path}: not a scene description (a YAML/JSON mapping with objects, splat or splats)")
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise SourceError(f"{path}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(TOP_KEYS))}")
    convention = str(data.get("convention", "rayform"))
    units = str(data.get("units", "m"))
    if convention not in CONVENTIONS:
        raise SourceError(f"{path}: convention {convention!r}; expected one of {', '.join(CONVENTIONS)}")
    if units not in UNITS:
        raise SourceError(f"{path}: units {units!r}; expected one of {', '.join(UNITS)}")
    scene = Scene(SceneMeta(name=str(data.get("name", path.stem)), sources=(str(path),), convention=convention))
    scene.ground = _ground(path, data.get("ground", True), UNITS[units])
    _Reader(path, scene, UNITS[units]).read(data)
    return scene


def _ground(path: Path, value: Any, scale: float) -> GroundPlane | None:
    if value is False or value is None:
        return None
    if value is True:
        return GroundPlane()
    if isinstance(value, dict) and set(value) <= {"height", "size"}:
        height, size = value.get("height", 0.0), value.get("size", 20.0 / scale)
        if _finite(height) and _finite(size) and size > 0:
            return GroundPlane(float(height) * scale, float(size) * scale)
    raise SourceError(f"{path}: ground must be true, false or {{height: H, size: S}} (numbers, S > 0), got {value!r}")


def _color(what: str, value: Any) -> tuple[float, float, float]:
    """An RGB colour: 3 finite numbers (SourceError otherwise)."""
    if not isinstance(value, list | tuple) or len(value) != 3 or not all(_finite(c) for c in value):
        raise SourceError(f"{what}: color must be 3 numbers (r, g, b), got {value!r}")
    return float(value[0]), float(value[1]), float(value[2])


def _finite(value: Any) -> bool:
    """A finite number as YAML/JSON give them (not a bool, a string or null)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class _Reader:
    """Reads the entries of one description into `scene`, leaving bad entries out with their reason."""

    def __init__(self, path: Path, scene: Scene, scale: float) -> None:
        self.path, self.scene, self.scale = path, scene, scale

    def read(self, data: dict[str, Any]) -> None:
        splats = data.get("splats", [])
        if "splat" in data:
            splats = [*splats, {"path": data["splat"]}]
        for kind, entries, add in (("splat", splats, self._splat), ("object", data.get("objects", []), self._object),
                                   ("camera", data.get("cameras", []), self._camera),
                                   ("light", data.get("lights", []), self._light)):
            if not isinstance(entries, list):
                raise SourceError(f"{self.path}: {kind}s must be a list, got {type(entries).__name__}")
            for i, entry in enumerate(entries):
                label = entry.get("name", f"{kind} {i}") if isinstance(entry, dict) else f"{kind} {i}"
                try:
                    if not isinstance(entry, dict):
                        raise SourceError(f"{kind} {i}: expected a mapping, got {entry!r}")
                    add(entry)
                except (RobokitError, ValueError, TypeError, KeyError) as exc:
                    reason = str(exc) if isinstance(exc, RobokitError) else f"{kind} {label!r}: {exc}"
                    self.scene.skipped.append((str(label), reason))

    def _file(self, value: Any) -> Path:
        p = Path(str(value)).expanduser()
        return p if p.is_absolute() else self.path.parent / p

    def _pose(self, name: str, value: Any) -> Pose:
        value = value or {}
        if not isinstance(value, dict) or not set(value) <= {"position", "orientation", "rpy_deg"}:
            raise SourceError(f"{name!r}: pose must be {{position, orientation (xyzw) | rpy_deg}}, got {value!r}")
        return _pose(name, value.get("position", [0, 0, 0]), value.get("orientation"), value.get("rpy_deg"),
                     self.scale)

    def _splat(self, entry: dict[str, Any]) -> None:
        if not set(entry) <= {"name", "path", "pose"} or "path" not in entry:
            raise SourceError(f"splat {entry.get('name', '?')!r}: expected keys path, name, pose; got {sorted(entry)}")
        name = self.scene.unique_name(str(entry.get("name") or Path(str(entry["path"])).stem))
        splat = read_splat_ply(self._file(entry["path"]), name, self._pose(name, entry.get("pose")))
        if self.scale != 1.0:
            splat = replace(splat, positions=splat.positions * self.scale, scales=splat.scales * self.scale)
        self.scene.splats.append(splat)
        self.scene.warnings.extend(dropped_notes(splat))

    def _object(self, entry: dict[str, Any]) -> None:
        raw = str(entry.get("name") or Path(str(entry.get("mesh", "object"))).stem)
        _known(f"object {raw!r}", entry, _OBJECT_KEYS)
        if "mesh" not in entry:
            raise SourceError(f"object {raw!r}: no mesh given")
        mode = entry.get("collision")
        if mode is not None and mode not in COLLISION_MODES:
            raise SourceError(f"object {raw!r}: collision {mode!r}; expected one of {', '.join(COLLISION_MODES)}")
        pose = self._pose(raw, entry.get("pose"))
        scale = float(entry.get("scale", 1.0)) * self.scale
        visual = self._mesh(raw, entry["mesh"], scale)
        collision = self._mesh(raw, entry["collision_mesh"], scale) if "collision_mesh" in entry else None
        mass = entry.get("mass")
        if mass is not None and not (np.isfinite(float(mass)) and float(mass) > 0):
            raise SourceError(f"object {raw!r}: mass {mass!r} must be a positive number of kg")
        color = entry.get("color")
        self.scene.objects.append(SceneObject(
            name=self.scene.unique_name(raw), visual=visual, pose=pose, dynamic=bool(entry.get("dynamic", False)),
            mass=None if mass is None else float(mass), density=float(entry.get("density", 1000.0)),
            collision=mode, collision_mesh=collision, source=str(self._file(entry["mesh"])),
            color=None if color is None else _color(f"object {raw!r}", color)))

    def _mesh(self, name: str, value: Any, scale: float) -> trimesh.Trimesh:
        mesh = load_mesh(self._file(value), name)
        if scale != 1.0:
            mesh.apply_scale(scale)
        mesh, notes = clean_mesh(mesh, name)
        self.scene.warnings.extend(notes)
        return mesh

    def _camera(self, entry: dict[str, Any]) -> None:
        raw = str(entry.get("name", "camera"))
        _known(f"camera {raw!r}", entry, _CAMERA_KEYS)
        position = entry.get("position", [0, 0, 0])
        if "look_at" in entry:
            pose = look_at(raw, np.asarray(position, float) * self.scale, np.asarray(entry["look_at"], float) *
                           self.scale, self.scene.meta.convention)
        else:
            pose = _pose(raw, position, entry.get("orientation"), entry.get("rpy_deg"), self.scale)
        width, height = int(entry.get("width", 640)), int(entry.get("height", 480))
        if width <= 0 or height <= 0:
            raise SourceError(f"camera {raw!r}: width and height must be positive")
        fy = float(entry.get("fy", (height / 2) / np.tan(np.radians(float(entry.get("fov_deg", 60.0))) / 2)))
        k = np.array([[float(entry.get("fx", fy)), 0, float(entry.get("cx", (width - 1) / 2))],
                      [0, fy, float(entry.get("cy", (height - 1) / 2))], [0, 0, 1]])
        if not np.isfinite(k).all() or k[0, 0] <= 0 or k[1, 1] <= 0:
            raise SourceError(f"camera {raw!r}: focal lengths must be positive and finite")
        name = self.scene.unique_name(raw)
        stream = PoseStream(f"{name}/pose", np.zeros(1, np.int64), pose.translation[None], pose.quaternion[None],
                            child_frame=name, convention=self.scene.meta.convention, static=True, is_camera=True)
        self.scene.cameras.append(SceneCamera(name, CameraInfo(width, height, k, frame_id=name), stream,
                                              source=str(self.path)))

    def _light(self, entry: dict[str, Any]) -> None:
        raw = str(entry.get("name", "light"))
        _known(f"light {raw!r}", entry, _LIGHT_KEYS)
        kind = str(entry.get("type", "distant"))
        if kind not in ("distant", "point"):
            raise SourceError(f"light {raw!r}: type {kind!r}; expected distant or point")
        default = SceneLight(raw)
        direction = np.asarray(entry.get("direction", default.direction), dtype=np.float64)
        position = np.asarray(entry.get("position", default.position), dtype=np.float64) * self.scale
        if direction.shape != (3,) or position.shape != (3,) or not np.isfinite([*direction, *position]).all():
            raise SourceError(f"light {raw!r}: direction and position must be 3 finite numbers")
        if np.linalg.norm(direction) == 0:
            raise SourceError(f"light {raw!r}: direction must not be zero")
        color = _color(f"light {raw!r}", entry.get("color", (1.0, 1.0, 1.0)))
        self.scene.lights.append(SceneLight(self.scene.unique_name(raw), kind, direction / np.linalg.norm(direction),
                                            position, float(entry.get("intensity", 1.0)), color))


def _known(what: str, entry: dict[str, Any], keys: frozenset[str]) -> None:
    unknown = sorted(set(entry) - keys)
    if unknown:
        raise SourceError(f"{what}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(keys))}")


def _pose(name: str, position: Any, orientation: Any, rpy_deg: Any, scale: float) -> Pose:
    """A pose from a position and an xyzw quaternion or roll/pitch/yaw degrees; SourceError when non-finite."""
    t = np.asarray(position, dtype=np.float64).reshape(-1) * scale
    if orientation is not None:
        q = np.asarray(orientation, dtype=np.float64).reshape(-1)
    elif rpy_deg is not None:
        q = Rotation.from_euler("xyz", np.asarray(rpy_deg, dtype=np.float64).reshape(3), degrees=True).as_quat()
    else:
        q = np.array([0.0, 0.0, 0.0, 1.0])
    if t.shape != (3,) or q.shape != (4,):
        raise SourceError(f"{name!r}: pose needs a 3-number position and a 4-number xyzw orientation")
    if not np.isfinite(t).all() or not np.isfinite(q).all() or np.linalg.norm(q) == 0:
        raise SourceError(f"{name!r}: non-finite pose (position {t.tolist()}, orientation {q.tolist()})")
    return Pose(t, q / np.linalg.norm(q))


def look_at(name: str, position: np.ndarray, target: np.ndarray, convention: str) -> Pose:
    """A camera at `position` looking at `target`, upright in `convention`'s world, in its camera axes."""
    up = lookup(convention).world.T @ np.array([0.0, 0.0, 1.0])
    forward = target - position
    if not np.isfinite([*position, *target]).all() or np.linalg.norm(forward) == 0:
        raise SourceError(f"camera {name!r}: look_at needs a finite target away from the position")
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, up)
    if np.linalg.norm(right) < 1e-6:  # looking straight up or down: any horizontal right works
        right = np.cross(forward, lookup(convention).world.T @ np.array([1.0, 0.0, 0.0]))
    right /= np.linalg.norm(right)
    opencv = np.stack([right, np.cross(forward, right), forward], axis=1)  # x right, y down, z forward
    rotation = opencv @ camera_change("opencv", convention)
    return Pose(position.astype(np.float64), Rotation.from_matrix(rotation).as_quat())
