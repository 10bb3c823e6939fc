"""Per-step pose vectors shared by the step-based writers (RLDS, WebDataset): xyz plus quaternion, float32."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from robokit.frames import to_order
from robokit.timeline import PoseStream

if TYPE_CHECKING:
    from robokit.converters.prepare import PreparedEpisode


def pose_key(channel: str) -> str:
    """A pose channel's feature name: `tf/tool0` → `tf_tool0`."""
    return channel.replace("/", "_")


def pose_names(quat_order: str) -> tuple[str, ...]:
    """Dimension names of a pose vector: `x, y, z` then the quaternion in `quat_order` (`qx`... or `qw`...)."""
    return ("x", "y", "z", *(f"q{c}" for c in quat_order))


def pose_vector(pose: PoseStream, quat_order: str, rows: slice = slice(None)) -> np.ndarray:
    """(T, 7) float32 of steps `rows`: translation then the quaternion in `quat_order`."""
    return np.hstack([pose.translation[rows], to_order(pose.quaternion[rows], quat_order)]).astype(np.float32)


def pose_vectors(p: PreparedEpisode, quat_order: str, rows: slice = slice(None)) -> dict[str, np.ndarray]:
    """(T, 7) float32 of steps `rows` per pose channel, keyed by `pose_key`."""
    return {pose_key(name): pose_vector(pose, quat_order, rows) for name, pose in sorted(p.poses.items())}
