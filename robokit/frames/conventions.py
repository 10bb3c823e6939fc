"""The frame conventions robokit converts between: world axes and camera axes, one table.

| convention | world axes (x, y, z)          | camera axes (x, y, z)           | camera looks |
|------------|-------------------------------|---------------------------------|--------------|
| `rayform`  | FLU: forward, left, up (Z up) | RDF: right, down, forward (OpenCV optical) | +Z |
| `ros`      | FLU (REP-103)                 | RDF (`*_optical` frames)        | +Z           |
| `opencv`   | RDF: right, down, forward     | RDF                             | +Z           |
| `opengl`   | RUB: right, up, back (Y up)   | RUB (OpenGL / NeRF camera)      | −Z           |
| `isaac`    | FLU (Isaac Sim world)         | RUB (USD camera prim)           | −Z           |
| `mujoco`   | FLU                           | RUB (MJCF camera, +Y up)        | −Z           |

`rayform` is robokit's own: right-handed, metres, Z up, X forward; OpenCV optical camera axes; poses are
camera-to-world (`T_world_from_sensor`, column vectors); quaternions xyzw, unit, w ≥ 0.

Y-up → Z-up: the `opengl` world maps to FLU keeping "forward": −Z_gl → +X, +Y_gl → +Z, +X_gl → −Y, i.e.
W = [[0,0,−1],[−1,0,0],[0,1,0]] (Rx(90°) then a 90° yaw), not the graphics-only Rx(+90°) that sends −Z_gl
to +Y. Likewise the `opencv` world maps +Z_cv (forward) → +X and −Y_cv (up) → +Z.

`world` holds the world axes as columns in FLU (rayform world) coordinates; `camera` holds the camera axes
as columns in OpenCV RDF coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from robokit.errors import FrameError

Matrix = npt.NDArray[np.float64]

_FLU = {"F": (1, 0, 0), "B": (-1, 0, 0), "L": (0, 1, 0), "R": (0, -1, 0), "U": (0, 0, 1), "D": (0, 0, -1)}


def _basis(axes: str, reference: str) -> Matrix:
    """Columns: the directions `axes` (letters F/B/L/R/U/D) in the coordinates of the `reference` axes."""
    ref = np.array([_FLU[c] for c in reference], dtype=np.float64).T
    own = np.array([_FLU[c] for c in axes], dtype=np.float64).T
    basis = ref.T @ own
    basis.setflags(write=False)
    return basis


@dataclass(frozen=True)
class Convention:
    """One row of the table: world axes in FLU coordinates, camera axes in OpenCV RDF coordinates."""

    name: str
    world: Matrix
    camera: Matrix
    description: str


CONVENTIONS: MappingProxyType[str, Convention] = MappingProxyType(
    {
        c.name: c
        for c in (
            Convention("rayform", _basis("FLU", "FLU"), _basis("RDF", "RDF"), "FLU world, OpenCV camera"),
            Convention("ros", _basis("FLU", "FLU"), _basis("RDF", "RDF"), "REP-103 FLU world, optical camera"),
            Convention("opencv", _basis("RDF", "FLU"), _basis("RDF", "RDF"), "RDF world, OpenCV camera"),
            Convention("opengl", _basis("RUB", "FLU"), _basis("RUB", "RDF"), "Y-up RUB world, OpenGL camera"),
            Convention("isaac", _basis("FLU", "FLU"), _basis("RUB", "RDF"), "Isaac Sim world, USD camera"),
            Convention("mujoco", _basis("FLU", "FLU"), _basis("RUB", "RDF"), "Z-up world, MJCF camera"),
        )
    }
)


def lookup(name: str) -> Convention:
    """The convention called `name`; FrameError listing the known ones otherwise."""
    try:
        return CONVENTIONS[name]
    except KeyError:
        raise FrameError(f"unknown frame convention {name!r}; expected one of {', '.join(CONVENTIONS)}") from None
