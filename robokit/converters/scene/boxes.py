"""Convex pieces for meshes that are not watertight: the surface voxelised, then covered by greedy boxes.

CoACD needs a closed volume (an open shell takes it minutes); boxes one voxel thick follow thin open
surfaces, such as a tray modelled without a bottom side, while keeping their cavities open.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import trimesh

VOXELS_ACROSS = 40  # along the mesh's longest side, at the finest


def greedy_boxes(solid: npt.NDArray[np.bool_]) -> list[tuple[tuple[int, int, int], tuple[int, int, int]]]:
    """Disjoint boxes (lo, hi index corners, hi exclusive) covering `solid`: grow along x, then y, then z."""
    left = solid.copy()
    boxes = []
    while left.any():
        x, y, z = (int(i) for i in np.argwhere(left)[0])
        x1 = x + 1
        while x1 < left.shape[0] and left[x1, y, z]:
            x1 += 1
        y1 = y + 1
        while y1 < left.shape[1] and left[x:x1, y1, z].all():
            y1 += 1
        z1 = z + 1
        while z1 < left.shape[2] and left[x:x1, y:y1, z1].all():
            z1 += 1
        left[x:x1, y:y1, z:z1] = False
        boxes.append(((x, y, z), (x1, y1, z1)))
    return boxes


def surface_boxes(mesh: trimesh.Trimesh, max_boxes: int) -> tuple[list[trimesh.Trimesh], float]:
    """At most `max_boxes` box meshes covering the voxelised surface of `mesh` (coarser voxels until they fit)."""
    pitch = float(max(mesh.extents.max(), 1e-3)) / VOXELS_ACROSS
    while True:
        grid = mesh.voxelized(pitch)
        spans = greedy_boxes(np.asarray(grid.matrix, dtype=bool))
        if len(spans) <= max_boxes or max(grid.shape) <= 2:
            break
        pitch *= 1.5
    corner = np.asarray(grid.transform, dtype=np.float64)[:3, 3] - pitch / 2  # voxel (0,0,0) low corner
    boxes = []
    for lo, hi in spans:
        low, high = corner + np.asarray(lo) * pitch, corner + np.asarray(hi) * pitch
        boxes.append(trimesh.creation.box(high - low, trimesh.transformations.translation_matrix((low + high) / 2)))
    return boxes, pitch
