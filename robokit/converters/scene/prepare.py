"""Turns a Scene into what scene writers need: per object its collision shapes and mass, or why it was left out.

Written once so the USD and MJCF writers resolve collision modes, decompose, derive splat collision meshes
and report failures identically.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from robokit.converters.scene.collision import CollisionShapes, collision_shapes, effective_mode
from robokit.converters.scene.mass import MassProperties, mass_properties
from robokit.converters.scene.model import Scene, SceneObject
from robokit.converters.scene.options import SceneOptions
from robokit.converters.scene.splat_collision import splat_collision
from robokit.errors import RobokitError


@dataclass(frozen=True)
class PreparedObject:
    """An object with its collision shapes and, when dynamic, its mass properties."""

    obj: SceneObject
    shapes: CollisionShapes
    mass: MassProperties | None


@dataclass
class PreparedScene:
    """The scene, its exportable objects, and (object, reason) for each one left out; notes for the log."""

    scene: Scene
    objects: list[PreparedObject] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def prepare_scene(scene: Scene, options: SceneOptions, exact_meshes: bool = True) -> PreparedScene:
    """Collision shapes for every object (plus splat-derived ones when asked); failures are left out, named.

    `exact_meshes` False (MuJoCo, which collides with convex hulls only) turns the "mesh" mode of a
    non-convex mesh into a convex decomposition.
    """
    prepared = PreparedScene(scene, skipped=list(scene.skipped), notes=list(scene.warnings))
    objects = list(scene.objects)
    if options.collision_from_splat:
        if not scene.splats:
            prepared.notes.append("collision_from_splat: the scene has no splat")
        for splat in scene.splats:
            try:
                derived, notes = splat_collision(scene, splat, options.splat_voxel, options.splat_occupancy)
            except RobokitError as exc:
                prepared.skipped.append((f"{splat.name}_collision", str(exc)))
                continue
            prepared.notes.extend(notes)
            if derived is not None:
                objects.append(derived)
    for obj in objects:
        mode, notes = effective_mode(obj, options.collision)
        if mode == "mesh" and not exact_meshes and not obj.collision_source.is_convex:
            mode = "convex-decomposition"
            notes.append(f"{obj.name}: MuJoCo collides with the convex hull of a mesh; decomposing the "
                         "non-convex mesh instead of --collision mesh")
        try:
            shapes = collision_shapes(obj, mode, options.max_pieces, options.decomposition_threshold)
            mass = mass_properties(obj) if obj.dynamic else None
        except RobokitError as exc:
            prepared.skipped.append((obj.name, str(exc)))
            continue
        prepared.notes.extend([*notes, *shapes.notes])
        prepared.objects.append(PreparedObject(replace(obj, collision=mode), shapes, mass))
    return prepared
