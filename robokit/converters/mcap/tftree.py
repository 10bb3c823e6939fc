"""One TF tree from an episode's pose streams: one parent per frame, a single root, no cycles.

A stream that would give a frame a second parent or close a cycle is written under a renamed child
(`<child>__<channel>`); NaN poses are dropped and counted; extra roots and unplaced camera frames are
linked to the root by identity `fills`. Edges leaving the root take the chosen world axes, edges into a
camera frame the chosen camera axes; edges between robot frames stay as recorded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from robokit.converters.mcap.encoding import Floats, Level
from robokit.frames import camera_change, canonical, convert_poses, world_change
from robokit.sources.naming import frame_name
from robokit.timeline import PoseStream

DEFAULT_ROOT = "world"
_ROOT_PREFERENCE = ("world", "map", "odom", "base_link", "base")
Note = tuple[Level, str]


@dataclass(frozen=True)
class Edge:
    """Transforms parent → child over time (`channel` "" for fills); quaternions xyzw, all finite."""

    channel: str
    parent: str
    child: str
    static: bool
    timestamps: np.ndarray
    translation: Floats
    quaternion: Floats


@dataclass(frozen=True)
class Tree:
    """The edges written to /tf and /tf_static, the identity fills, the root and what was changed."""

    root: str
    edges: tuple[Edge, ...]
    fills: tuple[Edge, ...]
    notes: tuple[Note, ...]


def slug(name: str) -> str:
    """A channel name as a frame-id suffix: `ee/pose` → `ee_pose`."""
    return re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_") or "frame"


class _Builder:
    def __init__(self) -> None:
        self.parent_of: dict[str, str] = {}
        self.owner: dict[str, str] = {}
        self.edges: list[Edge] = []
        self.notes: list[Note] = []

    def _ancestors(self, frame: str) -> Iterable[str]:
        while frame in self.parent_of:
            frame = self.parent_of[frame]
            yield frame

    def add(self, edge: Edge) -> None:
        """Add an edge, renaming its child when it has a parent already or the edge would close a cycle."""
        child, parent = edge.child, edge.parent
        why = ""
        if child in self.parent_of:
            why = f"frame {child!r} already has parent {self.parent_of[child]!r} (from {self.owner[child]})"
        elif child == parent or child in self._ancestors(parent):
            why = f"{parent!r} → {child!r} would close a cycle"
        if why:
            child = self._free(f"{edge.child}__{slug(edge.channel)}")
            self.notes.append(("warning", f"{edge.channel}: {why}; written as child frame {child!r}"))
        self.parent_of[child] = parent
        self.owner[child] = edge.channel
        self.edges.append(Edge(edge.channel, parent, child, edge.static, edge.timestamps, edge.translation,
                               edge.quaternion))

    def _free(self, name: str) -> str:
        used = set(self.parent_of) | set(self.parent_of.values())
        out, i = name, 2
        while out in used:
            out, i = f"{name}_{i}", i + 1
        return out

    def roots(self) -> list[str]:
        return sorted({p for p in self.parent_of.values() if p not in self.parent_of})

    def size(self, root: str) -> int:
        return sum(1 for c in self.parent_of if root in self._ancestors(c))


def _finite(name: str, stream: PoseStream, notes: list[Note]) -> tuple[np.ndarray, Floats, Floats] | None:
    ok = np.isfinite(stream.translation).all(axis=1) & np.isfinite(stream.quaternion).all(axis=1)
    bad = int((~ok).sum())
    if bad:
        notes.append(("warning", f"{name}: skipped {bad} of {len(stream)} poses with NaN values"))
    if not ok.any():
        notes.append(("warning", f"{name}: no finite pose left; not written"))
        return None
    return stream.timestamps[ok], stream.translation[ok], stream.quaternion[ok]


def build_tree(poses: Mapping[str, PoseStream], camera_frames: Iterable[str], convention: str, t0: int) -> Tree:
    """The tree of `poses` (`tf/*` channels claim their frames first) with `camera_frames` reachable from the root."""
    notes: list[Note] = []
    cameras = set(camera_frames)
    edges: list[Edge] = []
    for name in sorted(poses, key=lambda n: (not n.startswith("tf/"), n)):
        s = poses[name]
        kept = _finite(name, s, notes)
        if kept is not None:
            child = frame_name(s.child_frame) or slug(name)
            edges.append(Edge(name, frame_name(s.parent_frame), child, s.static, *kept))
    b = _Builder()
    for e in edges:
        if e.parent:
            b.add(e)
    root = _primary(b)
    for e in edges:
        if not e.parent:
            b.add(Edge(e.channel, root, e.child, e.static, e.timestamps, e.translation, e.quaternion))
    b.notes = notes + b.notes
    fills = [_identity(r, root, t0) for r in b.roots() if r != root]
    for f in fills:
        b.notes.append(("warning", f"frame {f.child!r} is not connected to root {root!r}; linked by identity"))
    placed = set(b.parent_of) | {root} | {f.child for f in fills}
    for frame in sorted(cameras - placed):
        fills.append(_identity(frame, root, t0))
        b.notes.append(("warning", f"camera frame {frame!r} has no extrinsics; placed at {root!r} by identity"))
    converted = tuple(_converted(e, poses[e.channel], root, cameras, convention) for e in b.edges)
    return Tree(root, converted, tuple(fills), tuple(b.notes))


def _primary(b: _Builder) -> str:
    """The root with the most frames below it (ties: world, map, odom, base_link, then by name)."""
    roots = b.roots()
    if not roots:
        return DEFAULT_ROOT
    rank = {r: i for i, r in enumerate(_ROOT_PREFERENCE)}
    return min(roots, key=lambda r: (-b.size(r), rank.get(r, len(rank)), r))


def _identity(child: str, root: str, t0: int) -> Edge:
    return Edge("", root, child, True, np.array([t0], dtype=np.int64), np.zeros((1, 3)), np.array([[0.0, 0, 0, 1]]))


def _converted(edge: Edge, stream: PoseStream, root: str, cameras: set[str], convention: str) -> Edge:
    """The edge in `convention`: world change when it leaves the root, camera change when it enters a camera."""
    from scipy.spatial.transform import Rotation  # slow to import (~0.25 s): loaded for rotation work only
    src = stream.convention
    camera = stream.is_camera or edge.child in cameras
    world_moves = edge.parent == root and not np.allclose(world_change(src, convention), np.eye(3))
    camera_moves = camera and not np.allclose(camera_change(src, convention), np.eye(3))
    t, q = edge.translation, edge.quaternion
    if world_moves:
        t, q = convert_poses(t, q, src, convention, camera=camera)
    elif camera_moves:
        q = canonical((Rotation.from_quat(q) * Rotation.from_matrix(camera_change(src, convention))).as_quat())
    return Edge(edge.channel, edge.parent, edge.child, edge.static, edge.timestamps, t, q)
