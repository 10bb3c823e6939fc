"""Scene options (collision mode, splat-derived collision, input convention), read from `WriterOptions.extra`."""

from __future__ import annotations

from dataclasses import dataclass

from robokit.converters.options import WriterOptions
from robokit.converters.registry import ExtraOption
from robokit.converters.scene.model import COLLISION_MODES
from robokit.errors import OptionError
from robokit.frames import CONVENTIONS

SCENE_OPTIONS = (
    ExtraOption("collision", str, "convex-decomposition",
                "Collision shapes for meshes without their own mode: convex-hull, convex-decomposition (CoACD) "
                "or mesh (exact triangles; static objects only).", COLLISION_MODES),
    ExtraOption("max_pieces", int, 16, "Convex decomposition: at most this many convex pieces per object.",
                low=1, high=256),
    ExtraOption("decomposition_threshold", float, 0.05, "Convex decomposition: concavity tolerance (CoACD).",
                low=0, high=1, above=True),
    ExtraOption("collision_from_splat", bool, False,
                "Build a static collision mesh from the splat (opacity-weighted voxels + marching cubes) "
                "where no mesh object covers it."),
    ExtraOption("splat_voxel", float, 0.02, "Voxel size in metres for --collision-from-splat.",
                low=0, high=10, above=True),
    ExtraOption("splat_occupancy", float, 0.5, "Summed opacity that makes a voxel solid (--collision-from-splat).",
                low=0, high=1000, above=True),
    ExtraOption("scene_frame", str, "rayform",
                "Frame convention of bare splat/mesh inputs (a scene file states its own).", tuple(CONVENTIONS)),
)


@dataclass(frozen=True)
class SceneOptions:
    """The scene options with their types checked."""

    collision: str = "convex-decomposition"
    max_pieces: int = 16
    decomposition_threshold: float = 0.05
    collision_from_splat: bool = False
    splat_voxel: float = 0.02
    splat_occupancy: float = 0.5
    scene_frame: str = "rayform"

    @classmethod
    def from_writer(cls, options: WriterOptions) -> SceneOptions:
        """The scene options found in `options.extra` (defaults for the rest); OptionError for bad values."""
        values = {o.name: options.extra.get(o.name, o.default) for o in SCENE_OPTIONS}
        try:
            parsed = cls(collision=str(values["collision"]), max_pieces=int(values["max_pieces"]),
                         decomposition_threshold=float(values["decomposition_threshold"]),
                         collision_from_splat=_flag(values["collision_from_splat"]),
                         splat_voxel=float(values["splat_voxel"]), splat_occupancy=float(values["splat_occupancy"]),
                         scene_frame=str(values["scene_frame"]))
        except (TypeError, ValueError) as exc:
            raise OptionError(f"scene option: {exc}") from exc
        if parsed.collision not in COLLISION_MODES:
            raise OptionError(f"collision {parsed.collision!r}: expected one of {', '.join(COLLISION_MODES)}")
        if parsed.scene_frame not in CONVENTIONS:
            raise OptionError(f"scene_frame {parsed.scene_frame!r}: expected one of {', '.join(CONVENTIONS)}")
        if parsed.max_pieces < 1 or not 0 < parsed.decomposition_threshold <= 1:
            raise OptionError("max_pieces must be ≥ 1 and decomposition_threshold in (0, 1]")
        if parsed.splat_voxel <= 0 or parsed.splat_occupancy <= 0:
            raise OptionError("splat_voxel and splat_occupancy must be positive")
        return parsed


def _flag(value: object) -> bool:
    """A boolean option given as a bool or as text (true/false, yes/no, 1/0)."""
    if isinstance(value, str):
        if value.lower() not in ("true", "false", "yes", "no", "1", "0"):
            raise ValueError(f"collision_from_splat {value!r}: expected true or false")
        return value.lower() in ("true", "yes", "1")
    return bool(value)
