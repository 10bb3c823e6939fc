"""Mass, centre of mass and inertia of a dynamic object, from its watertight mesh or else its convex hull."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robokit.converters.scene.collision import convex_hull
from robokit.converters.scene.model import SceneObject
from robokit.errors import ConversionError


@dataclass(frozen=True)
class MassProperties:
    """Mass in kg, centre of mass (3,) and inertia tensor (3×3, about the centre) in the object frame."""

    mass: float
    center: npt.NDArray[np.float64]
    inertia: npt.NDArray[np.float64]


def mass_properties(obj: SceneObject) -> MassProperties:
    """The object's mass (given, else volume × density) with the inertia of a uniform solid."""
    source = obj.collision_source
    solid = source if source.is_watertight and source.volume > 0 else convex_hull(source.vertices, obj.name)
    volume = float(solid.volume)
    mass = obj.mass if obj.mass is not None else volume * obj.density
    if not (np.isfinite(mass) and mass > 0 and volume > 0):
        raise ConversionError(f"object {obj.name!r}: mass {mass!r} and volume {volume:g} m³ must be positive")
    inertia = np.asarray(solid.moment_inertia, dtype=np.float64) * (mass / volume)
    return MassProperties(float(mass), np.asarray(solid.center_mass, dtype=np.float64), inertia)
