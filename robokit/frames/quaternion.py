"""Quaternion component order, kept separate from the frame convention (MuJoCo/USD want wxyz, robokit xyzw)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from robokit.errors import FrameError

QUAT_ORDERS = ("xyzw", "wxyz")

Quats = npt.NDArray[np.float64]


def _quats(q: npt.ArrayLike, order: str) -> Quats:
    """`q` as float64 (..., 4), after checking `order` is one of QUAT_ORDERS."""
    if order not in QUAT_ORDERS:
        raise FrameError(f"unknown quaternion order {order!r}; expected one of {', '.join(QUAT_ORDERS)}")
    arr = np.asarray(q, dtype=np.float64)
    if arr.ndim == 0 or arr.shape[-1] != 4:
        raise ValueError(f"quaternions must have 4 components in the last axis, got shape {arr.shape}")
    return arr


def to_order(q_xyzw: npt.ArrayLike, order: str) -> Quats:
    """xyzw quaternions (..., 4) rewritten in `order`."""
    q = _quats(q_xyzw, order)
    return np.roll(q, 1, axis=-1) if order == "wxyz" else q.copy()


def from_order(q: npt.ArrayLike, order: str) -> Quats:
    """Quaternions (..., 4) given in `order` rewritten as xyzw."""
    arr = _quats(q, order)
    return np.roll(arr, -1, axis=-1) if order == "wxyz" else arr.copy()


def canonical(q_xyzw: npt.ArrayLike) -> Quats:
    """Unit xyzw quaternions with w ≥ 0 (q and −q are one rotation); zero or NaN rows become NaN."""
    q = _quats(q_xyzw, "xyzw")
    norms = np.linalg.norm(q, axis=-1, keepdims=True)
    scale = np.where(q[..., 3:] < 0, -1.0, 1.0) / np.where(norms > 0, norms, np.nan)
    return q * scale
