"""The scene model: splats, meshes (visual + collision, static or dynamic), cameras, lights, ground, metadata.

Poses are rigid `world_from_object` transforms in `SceneMeta.convention` (quaternions xyzw); mesh vertices
and splat centres are in their object's local frame, in metres.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import trimesh

from robokit.timeline import CameraInfo, PoseStream

Floats = npt.NDArray[np.float64]
COLLISION_MODES = ("convex-hull", "convex-decomposition", "mesh")


@dataclass(frozen=True)
class Pose:
    """A rigid transform: translation (3,) and a unit xyzw quaternion (4,)."""

    translation: Floats = field(default_factory=lambda: np.zeros(3))
    quaternion: Floats = field(default_factory=lambda: np.array([0.0, 0.0, 0.0, 1.0]))

    def matrix(self) -> Floats:
        """The 4×4 homogeneous matrix (column vectors)."""
        from scipy.spatial.transform import Rotation

        out = np.eye(4)
        out[:3, :3] = Rotation.from_quat(self.quaternion).as_matrix()
        out[:3, 3] = self.translation
        return out


@dataclass(frozen=True)
class SplatSet:
    """3D Gaussians with activated values: linear scales, opacities in [0, 1], unit xyzw orientations.

    `sh` is (N, (degree+1)², 3): per particle, coefficient-major RGB triples (DC first).
    """

    name: str
    positions: npt.NDArray[np.float32]
    orientations: npt.NDArray[np.float32]
    scales: npt.NDArray[np.float32]
    opacities: npt.NDArray[np.float32]
    sh: npt.NDArray[np.float32]
    sh_degree: int
    pose: Pose = field(default_factory=Pose)
    source: str = ""
    dropped: int = 0  # splats left out when read: non-finite or overflowing values (see ply.dropped_notes)

    def __len__(self) -> int:
        return len(self.positions)

    def world_positions(self) -> Floats:
        """Centres in the scene world (the splat's pose applied)."""
        m = self.pose.matrix()
        return np.asarray(self.positions, dtype=np.float64) @ m[:3, :3].T + m[:3, 3]


@dataclass(frozen=True)
class SceneObject:
    """A mesh object: visual mesh (None for a collision-only proxy), optional explicit collision mesh, pose.

    `collision` is the object's own collision mode (None: the writer's `--collision`); `mass` in kg
    applies to dynamic objects (None: from the volume at `density` kg/m³).
    """

    name: str
    visual: trimesh.Trimesh | None
    pose: Pose = field(default_factory=Pose)
    dynamic: bool = False
    mass: float | None = None
    density: float = 1000.0
    collision: str | None = None
    collision_mesh: trimesh.Trimesh | None = None
    color: tuple[float, float, float] | None = None
    source: str = ""

    @property
    def collision_source(self) -> trimesh.Trimesh:
        """The mesh that collision shapes are built from."""
        mesh = self.collision_mesh if self.collision_mesh is not None else self.visual
        assert mesh is not None, f"{self.name}: an object needs a visual or a collision mesh"
        return mesh


@dataclass(frozen=True)
class SceneCamera:
    """A pinhole camera: intrinsics plus one pose or a trajectory (a camera PoseStream, `is_camera=True`)."""

    name: str
    intrinsics: CameraInfo
    poses: PoseStream
    source: str = ""

    @property
    def animated(self) -> bool:
        return len(self.poses) > 1


@dataclass(frozen=True)
class SceneLight:
    """A light: `distant` (sun, shining along `direction`) or `point` (at `position`); intensity 1 = default."""

    name: str
    kind: str = "distant"
    direction: Floats = field(default_factory=lambda: np.array([0.3, 0.2, -1.0]))
    position: Floats = field(default_factory=lambda: np.array([0.0, 0.0, 3.0]))
    intensity: float = 1.0
    color: tuple[float, float, float] = (1.0, 1.0, 1.0)


@dataclass(frozen=True)
class GroundPlane:
    """An infinite floor at `height` along the world's up axis; `size` is the rendered extent in metres."""

    height: float = 0.0
    size: float = 20.0


@dataclass(frozen=True)
class SceneMeta:
    """Where the scene came from and how to read it: convention of its poses, units (always metres)."""

    name: str = "scene"
    sources: tuple[str, ...] = ()
    convention: str = "rayform"
    units: str = "m"


@dataclass
class Scene:
    """Everything a scene writer needs; `skipped` lists (object, reason) for inputs that were left out."""

    meta: SceneMeta = field(default_factory=SceneMeta)
    splats: list[SplatSet] = field(default_factory=list)
    objects: list[SceneObject] = field(default_factory=list)
    cameras: list[SceneCamera] = field(default_factory=list)
    lights: list[SceneLight] = field(default_factory=list)
    ground: GroundPlane | None = field(default_factory=GroundPlane)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    episodes: int = 0  # recordings that contributed camera trajectories

    def names(self) -> set[str]:
        """Every name in use (objects, splats, cameras, lights)."""
        groups: list[list[str]] = [[o.name for o in self.objects], [s.name for s in self.splats],
                                   [c.name for c in self.cameras], [li.name for li in self.lights]]
        return {n for g in groups for n in g}

    def unique_name(self, base: str) -> str:
        """`base` made safe (letters, digits, `_`) and unique in the scene."""
        safe = "".join(c if c.isalnum() or c == "_" else "_" for c in base) or "object"
        if safe[0].isdigit():
            safe = "_" + safe
        taken, name, i = self.names(), safe, 1
        while name in taken:
            name, i = f"{safe}_{i}", i + 1
        return name
