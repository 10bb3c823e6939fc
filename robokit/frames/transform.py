"""Convert poses and points between conventions: T' = W·T·M (world change left, camera change right)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt

from robokit.frames.conventions import Matrix, lookup
from robokit.frames.quaternion import canonical
from robokit.timeline import PoseStream

Array = npt.NDArray[np.float64]


def world_change(src: str, dst: str) -> Matrix:
    """W mapping `src`-world coordinates to `dst`-world coordinates (a proper rotation)."""
    return lookup(dst).world.T @ lookup(src).world


def camera_change(src: str, dst: str) -> Matrix:
    """M = B_srcᵀ·B_dst relabelling camera axes: R_dst = R_src·M for camera-to-world rotations."""
    return lookup(src).camera.T @ lookup(dst).camera


def convert_poses(
    translation: npt.ArrayLike, quat_xyzw: npt.ArrayLike, src: str, dst: str, *, camera: bool
) -> tuple[Array, Array]:
    """Poses (N×3, N×4 xyzw, or one pose) from `src` to `dst`; `camera` also relabels the sensor axes.

    Returns canonical quaternions (unit, w ≥ 0); rows with NaN or zero quaternions stay NaN.
    """
    from scipy.spatial.transform import Rotation  # slow to import (~0.25 s): loaded for rotation work only

    world = Rotation.from_matrix(world_change(src, dst))
    t = np.asarray(world.apply(np.asarray(translation, dtype=np.float64)), dtype=np.float64)
    q = canonical(quat_xyzw)
    valid = np.asarray(np.isfinite(q).all(axis=-1))
    if valid.any():
        rotation = world * Rotation.from_quat(q[valid])
        if camera:
            rotation = rotation * Rotation.from_matrix(camera_change(src, dst))
        q[valid] = rotation.as_quat()
    return t, canonical(q)


def convert_pose_stream(stream: PoseStream, dst: str) -> PoseStream:
    """A copy of `stream` in convention `dst` (camera axes relabelled when `stream.is_camera`)."""
    t, q = convert_poses(stream.translation, stream.quaternion, stream.convention, dst, camera=stream.is_camera)
    return replace(stream, translation=t, quaternion=q, convention=dst)


def convert_points(points: npt.ArrayLike, src: str, dst: str) -> Array:
    """Points (N×3 or one point: point clouds, mesh vertices) from the `src` world to the `dst` world."""
    from scipy.spatial.transform import Rotation  # slow to import (~0.25 s): loaded for rotation work only
    world = Rotation.from_matrix(world_change(src, dst))
    return np.asarray(world.apply(np.asarray(points, dtype=np.float64)), dtype=np.float64)
