"""Scene options (collision mode, splat-derived collision, input convention), declared once, read typed."""

from __future__ import annotations

from dataclasses import dataclass

from robokit.converters.options import WriterOptions
from robokit.converters.registry import ExtraOption
from robokit.converters.scene.model import COLLISION_MODES
from robokit.frames import CONVENTIONS

COLLISION = ExtraOption("collision", str, "convex-decomposition",
                        "Collision shapes for meshes without their own mode: convex-hull, convex-decomposition "
                        "(CoACD) or mesh (exact triangles; static objects only).", COLLISION_MODES)
MAX_PIECES = ExtraOption("max_pieces", int, 16, "Convex decomposition: at most this many convex pieces per object.",
                         low=1, high=256)
DECOMPOSITION_THRESHOLD = ExtraOption("decomposition_threshold", float, 0.05,
                                      "Convex decomposition: concavity tolerance (CoACD).", low=0, high=1, above=True)
COLLISION_FROM_SPLAT = ExtraOption("collision_from_splat", bool, False,
                                   "Build a static collision mesh from the splat (opacity-weighted voxels + marching "
                                   "cubes) where no mesh object covers it.")
SPLAT_VOXEL = ExtraOption("splat_voxel", float, 0.02, "Voxel size in metres for --collision-from-splat.",
                          low=0, high=10, above=True)
SPLAT_OCCUPANCY = ExtraOption("splat_occupancy", float, 0.5,
                              "Summed opacity that makes a voxel solid (--collision-from-splat).",
                              low=0, high=1000, above=True)
SCENE_FRAME = ExtraOption("scene_frame", str, "rayform", "Frame convention of bare splat/mesh inputs (a scene file "
                          "states its own).", tuple(CONVENTIONS))
SCENE_OPTIONS = (COLLISION, MAX_PIECES, DECOMPOSITION_THRESHOLD, COLLISION_FROM_SPLAT, SPLAT_VOXEL, SPLAT_OCCUPANCY,
                 SCENE_FRAME)


@dataclass(frozen=True)
class SceneOptions:
    """The scene options, typed (defaults: their declarations above)."""

    collision: str = COLLISION.default
    max_pieces: int = MAX_PIECES.default
    decomposition_threshold: float = DECOMPOSITION_THRESHOLD.default
    collision_from_splat: bool = COLLISION_FROM_SPLAT.default
    splat_voxel: float = SPLAT_VOXEL.default
    splat_occupancy: float = SPLAT_OCCUPANCY.default
    scene_frame: str = SCENE_FRAME.default

    @classmethod
    def from_writer(cls, options: WriterOptions) -> SceneOptions:
        """The scene options' values in `options` (defaults for the rest); OptionError for bad values."""
        return cls(collision=options.value(COLLISION), max_pieces=options.value(MAX_PIECES),
                   decomposition_threshold=options.value(DECOMPOSITION_THRESHOLD),
                   collision_from_splat=options.value(COLLISION_FROM_SPLAT), splat_voxel=options.value(SPLAT_VOXEL),
                   splat_occupancy=options.value(SPLAT_OCCUPANCY), scene_frame=options.value(SCENE_FRAME))
