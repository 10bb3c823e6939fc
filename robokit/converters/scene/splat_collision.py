"""A collision mesh from Gaussian splats: opacity-weighted voxel occupancy of the centres, then marching cubes.

Only the parts of the splat no mesh object covers are kept: centres inside an object's bounding box (grown
by one voxel) or within one voxel of the ground are ignored, enclosed cavities are filled (splats sit on
surfaces, so a closed shell of them is a solid), and components smaller than a few voxels (floaters) are
dropped.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import trimesh
from scipy import ndimage

from robokit.converters.scene.model import Scene, SceneObject, SplatSet
from robokit.errors import ConversionError

MAX_CELLS = 256**3  # the occupancy grid is coarsened beyond this many voxels
MIN_COMPONENT_VOXELS = 4


def splat_collision(scene: Scene, splat: SplatSet, voxel: float, occupancy: float
                    ) -> tuple[SceneObject | None, list[str]]:
    """A static collision-only object for the uncovered part of `splat` (None when nothing is solid), plus notes."""
    points = splat.world_positions()
    keep = np.isfinite(points).all(axis=1) & ~_covered(scene, points, voxel)
    points, weights = points[keep], np.asarray(splat.opacities, dtype=np.float64)[keep]
    notes: list[str] = []
    if len(points) == 0:
        return None, [f"{splat.name}: every splat lies on a mesh object or the ground; no splat collision mesh"]
    origin = points.min(axis=0)
    span = points.max(axis=0) - origin
    if np.prod(np.floor(span / voxel) + 3) > MAX_CELLS:
        coarse = float(np.cbrt(np.prod(span + 3 * voxel) / MAX_CELLS)) * 1.05
        notes.append(f"{splat.name}: voxel {voxel:g} m gives too large a grid; using {coarse:.4g} m")
        voxel = coarse
    occupied = _occupancy(points, weights, origin, voxel) >= occupancy
    solid = _solidify(occupied, scene, origin, voxel)
    labels, count = ndimage.label(solid)
    sizes = np.bincount(labels.ravel(), minlength=count + 1)
    solid &= (sizes >= MIN_COMPONENT_VOXELS)[labels] & (labels > 0)
    if not solid.any():
        return None, [*notes, f"{splat.name}: no voxel reaches occupancy {occupancy:g}; no splat collision mesh"]
    mesh = _surface(solid, origin, voxel)
    name = scene.unique_name(f"{splat.name}_collision")
    notes.append(f"{name}: collision mesh from {len(points)} splats, {int(solid.sum())} voxels of {voxel:g} m, "
                 f"{len(mesh.faces)} triangles")
    return SceneObject(name, None, collision_mesh=mesh, source=f"{splat.source} (splat occupancy)"), notes


def _covered(scene: Scene, points: npt.NDArray[np.float64], margin: float) -> npt.NDArray[np.bool_]:
    """Points inside a mesh object's world bounding box (grown by `margin`) or within `margin` of the ground."""
    covered = np.zeros(len(points), dtype=bool)
    for obj in scene.objects:
        corners = trimesh.bounds.corners(obj.collision_source.bounds)
        m = obj.pose.matrix()
        world = corners @ m[:3, :3].T + m[:3, 3]
        lo, hi = world.min(axis=0) - margin, world.max(axis=0) + margin
        covered |= ((points >= lo) & (points <= hi)).all(axis=1)
    if scene.ground is not None:
        up = _up(scene.meta.convention)
        covered |= points @ up <= scene.ground.height + margin
    return covered


def _up(convention: str) -> npt.NDArray[np.float64]:
    from robokit.frames.conventions import lookup

    return np.asarray(lookup(convention).world.T @ np.array([0.0, 0.0, 1.0]), dtype=np.float64)


def _occupancy(points: npt.NDArray[np.float64], weights: npt.NDArray[np.float64], origin: npt.NDArray[np.float64],
               voxel: float) -> npt.NDArray[np.float64]:
    """Summed opacity per voxel, with an empty border so every surface closes."""
    index = np.floor((points - origin) / voxel).astype(np.int64) + 1
    shape = tuple(int(s) for s in index.max(axis=0) + 2)
    flat = np.ravel_multi_index(index.T, shape)
    counts = np.bincount(flat, weights=weights, minlength=int(np.prod(shape)))
    return np.asarray(counts, dtype=np.float64).reshape(shape)


def _solidify(occupied: npt.NDArray[np.bool_], scene: Scene, origin: npt.NDArray[np.float64], voxel: float
              ) -> npt.NDArray[np.bool_]:
    """Close one-voxel gaps, then fill enclosed cavities, with the ground (when there is one) closing shells."""
    solid = ndimage.binary_closing(occupied, structure=np.ones((3, 3, 3), dtype=bool), border_value=0) | occupied
    if scene.ground is None:
        return np.asarray(ndimage.binary_fill_holes(solid), dtype=bool)
    up = _up(scene.meta.convention)
    axis = int(np.argmax(np.abs(up)))
    sign = float(np.sign(up[axis]))
    level = int(np.clip(np.floor((sign * scene.ground.height - origin[axis]) / voxel) + 1, 0, solid.shape[axis] - 1))
    below = np.arange(solid.shape[axis]) <= level if sign > 0 else np.arange(solid.shape[axis]) >= level
    mask = below.reshape([-1 if i == axis else 1 for i in range(3)])
    filled = np.asarray(ndimage.binary_fill_holes(solid | mask), dtype=bool)
    return filled & ~mask


def _surface(solid: npt.NDArray[np.bool_], origin: npt.NDArray[np.float64], voxel: float) -> trimesh.Trimesh:
    """Marching cubes over the solid voxels, in world coordinates, outward-facing."""
    from skimage.measure import marching_cubes

    verts, faces, _, _ = marching_cubes(solid.astype(np.float32), level=0.5)
    world = origin + (np.asarray(verts, dtype=np.float64) - 1 + 0.5) * voxel
    mesh = trimesh.Trimesh(world, faces, process=True)
    trimesh.repair.fix_normals(mesh)
    if len(mesh.faces) == 0:
        raise ConversionError("splat occupancy produced an empty surface")
    return mesh
