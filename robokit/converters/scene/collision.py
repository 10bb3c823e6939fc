"""Collision shapes for a mesh object: one convex hull, a CoACD convex decomposition, or the exact mesh.

Every piece handed to a writer is finite, has consistent winding and encloses volume: flat or colinear
input is thickened before its hull is taken, so neither MuJoCo ("coplanar vertices") nor PhysX rejects it.
A mesh that is not watertight has its small holes filled; an open surface (CoACD would take minutes on
it) is covered by boxes from its voxelised surface instead, merged down to the piece limit.
Decompositions are cached by mesh content, so writing USD and MJCF from one scene decomposes once.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import trimesh
from scipy.spatial import ConvexHull

from robokit.converters.scene.boxes import surface_boxes
from robokit.converters.scene.model import SceneObject
from robokit.errors import ConversionError

MIN_THICKNESS = 1e-3  # metres: flat input is thickened to this before taking its hull
MAX_HULL_VERTICES = 64  # per convex piece (PhysX's default hull limit)
BOXES_PER_PIECE = 6  # an open surface is first covered by up to this many boxes per allowed piece
_CACHE_SIZE = 64
_cache: OrderedDict[str, tuple[trimesh.Trimesh, ...]] = OrderedDict()


@dataclass(frozen=True)
class CollisionShapes:
    """The shapes of one object: convex `pieces` (or the exact mesh when `mode` is "mesh"), with notes."""

    mode: str
    pieces: tuple[trimesh.Trimesh, ...]
    notes: tuple[str, ...] = ()


def effective_mode(obj: SceneObject, default: str) -> tuple[str, list[str]]:
    """The object's mode (its own, else `default`); "mesh" on a dynamic object becomes a decomposition."""
    mode = obj.collision or default
    if mode == "mesh" and obj.dynamic:
        return "convex-decomposition", [f"{obj.name}: dynamic objects cannot collide as a triangle mesh in "
                                        "PhysX or MuJoCo; using convex-decomposition"]
    return mode, []


def collision_shapes(obj: SceneObject, mode: str, max_pieces: int = 16, threshold: float = 0.05) -> CollisionShapes:
    """Shapes for `obj` in `mode` (convex-hull | convex-decomposition | mesh); ConversionError naming the object."""
    mesh = obj.collision_source
    if mode == "mesh":
        notes = () if mesh.is_watertight else (f"{obj.name}: collision mesh is not watertight (fine for static "
                                               "triangle-mesh collision)",)
        return CollisionShapes(mode, (mesh,), notes)
    if mode == "convex-hull":
        return CollisionShapes(mode, (convex_hull(mesh.vertices, obj.name),))
    if mode != "convex-decomposition":
        raise ConversionError(f"object {obj.name!r}: unknown collision mode {mode!r}")
    if mesh.is_watertight:
        return CollisionShapes(mode, decompose(mesh, obj.name, max_pieces, threshold))
    closed = close_small_holes(mesh)
    if closed is not None:
        return CollisionShapes(mode, decompose(closed, obj.name, max_pieces, threshold),
                               (f"{obj.name}: small holes in the mesh filled before decomposing",))
    boxes, pitch = surface_boxes(mesh, BOXES_PER_PIECE * max_pieces)
    pieces = merge_pieces(boxes, max_pieces, obj.name)
    return CollisionShapes(mode, pieces, (f"{obj.name}: mesh is not watertight; {len(pieces)} convex pieces "
                                          f"cover its surface voxelised at {pitch:.3g} m",))


def close_small_holes(mesh: trimesh.Trimesh) -> trimesh.Trimesh | None:
    """`mesh` made watertight by filling holes that add under 1 % of its area; None when that does not work."""
    closed = mesh.copy()
    trimesh.repair.fill_holes(closed)
    if not closed.is_watertight or closed.area > 1.01 * mesh.area:
        return None
    trimesh.repair.fix_normals(closed)
    return closed


def convex_hull(points: npt.ArrayLike, name: str) -> trimesh.Trimesh:
    """The convex hull of `points`; flat or colinear sets are thickened to MIN_THICKNESS first."""
    pts = np.unique(np.asarray(points, dtype=np.float64).reshape(-1, 3), axis=0)
    pts = pts[np.isfinite(pts).all(axis=1)]
    if len(pts) == 0:
        raise ConversionError(f"object {name!r}: no finite vertices to build a collision shape from")
    centre = pts.mean(axis=0)
    axes = np.linalg.svd(pts - centre, full_matrices=True)[2]  # rows: principal directions
    extent = np.ptp(pts @ axes.T, axis=0)
    thin = extent < MIN_THICKNESS
    if thin.any():  # pad each thin principal direction so the hull has volume
        offsets = np.array(np.meshgrid(*[[-1, 1] if t else [0] for t in thin], indexing="ij")).reshape(3, -1).T
        pad = (offsets * MIN_THICKNESS / 2) @ axes
        pts = (pts[:, None, :] + pad[None, :, :]).reshape(-1, 3)
    try:
        hull: trimesh.Trimesh = trimesh.convex.convex_hull(pts)
    except Exception as exc:  # qhull's own error is the reason
        raise ConversionError(f"object {name!r}: convex hull failed: {exc}") from exc
    if not hull.is_volume:
        trimesh.repair.fix_normals(hull)
    return hull


def decompose(mesh: trimesh.Trimesh, name: str, max_pieces: int, threshold: float) -> tuple[trimesh.Trimesh, ...]:
    """CoACD convex pieces (at most `max_pieces`) of `mesh`, each re-hulled; ConversionError on failure."""
    hull = convex_hull(mesh.vertices, name)
    if mesh.is_volume and mesh.volume >= (1 - threshold / 10) * hull.volume:  # already (nearly) convex
        return (hull,)
    key = _key(mesh, max_pieces, threshold)
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    try:
        import coacd
    except ImportError as exc:
        raise ConversionError(f"object {name!r}: convex decomposition needs the coacd package "
                              "(pip install coacd), or use --collision convex-hull") from exc
    coacd.set_log_level("error")
    try:
        parts = coacd.run_coacd(coacd.Mesh(np.asarray(mesh.vertices, np.float64), np.asarray(mesh.faces, np.int32)),
                                threshold=threshold, max_convex_hull=max_pieces, preprocess_mode="auto",
                                resolution=1000, mcts_nodes=10, mcts_iterations=50, max_ch_vertex=MAX_HULL_VERTICES,
                                seed=0)
    except Exception as exc:  # CoACD's failure is the reason
        raise ConversionError(f"object {name!r}: convex decomposition failed: {type(exc).__name__}: {exc}") from exc
    good = [np.asarray(v, dtype=np.float64) for v, f in parts if len(v) >= 4 and len(f) and np.isfinite(v).all()]
    if not good:
        raise ConversionError(f"object {name!r}: convex decomposition produced no usable piece "
                              f"({len(parts)} returned); try --collision convex-hull")
    pieces = merge_pieces([convex_hull(v, name) for v in good], max_pieces, name)
    _cache[key] = pieces
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return pieces


def merge_pieces(pieces: list[trimesh.Trimesh], max_pieces: int, name: str) -> tuple[trimesh.Trimesh, ...]:
    """At most `max_pieces` convex pieces: repeatedly merge the pair whose joint hull adds the least volume."""
    pieces = list(pieces)
    cost: dict[tuple[int, int], float] = {}

    def added(i: int, j: int) -> float:
        joint = ConvexHull(np.vstack([pieces[i].vertices, pieces[j].vertices]))
        return float(joint.volume - pieces[i].volume - pieces[j].volume)

    alive = set(range(len(pieces)))
    while len(alive) > max_pieces:
        for i in alive:
            for j in alive:
                if i < j and (i, j) not in cost:
                    cost[(i, j)] = added(i, j)
        i, j = min((pair for pair in cost if pair[0] in alive and pair[1] in alive), key=cost.__getitem__)
        pieces.append(convex_hull(np.vstack([pieces[i].vertices, pieces[j].vertices]), name))
        alive -= {i, j}
        alive.add(len(pieces) - 1)
    return tuple(pieces[k] for k in sorted(alive))


def _key(mesh: trimesh.Trimesh, max_pieces: int, threshold: float) -> str:
    digest = hashlib.sha1(np.ascontiguousarray(mesh.vertices, np.float64).tobytes())
    digest.update(np.ascontiguousarray(mesh.faces, np.int64).tobytes())
    digest.update(f"{max_pieces}:{threshold}".encode())
    return digest.hexdigest()
