"""What the scene writers (USD, MJCF) share: refusing recordings, the result summary, world conversion."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from robokit.converters.options import WriterOptions
from robokit.converters.registry import WriteResult
from robokit.converters.scene.model import Pose
from robokit.converters.scene.prepare import PreparedScene
from robokit.errors import ConversionError
from robokit.frames import convert_points, convert_poses
from robokit.frames.conventions import lookup
from robokit.timeline import Episode


class SceneConverter:
    """Base of writers with `consumes = "scene"`: `write_scene` does the work, `write` explains what to give."""

    name = "scene"
    consumes = "scene"
    target_convention = "rayform"  # the consumer's own frame convention (Z-up FLU world)
    writes_splats = True

    def write(self, episodes: Sequence[Episode], out_dir: Path, options: WriterOptions) -> WriteResult:
        raise ConversionError(f"{self.name} writes simulator scenes: give a scene input (SCENE.yaml, SPLAT.ply or a "
                              "mesh); recordings given with it contribute camera trajectories")

    def start_result(self, prepared: PreparedScene, options: WriterOptions) -> WriteResult:
        """A WriteResult carrying the preparation's notes and what was left out (named, with reasons)."""
        scene = prepared.scene
        result = WriteResult(episodes=scene.episodes, contents={
            "objects": len(prepared.objects), "splats": len(scene.splats) if self.writes_splats else 0,
            "colliders": sum(len(o.shapes.pieces) for o in prepared.objects), "cameras": len(scene.cameras)})
        if lookup(options.frame).world.tolist() != np.eye(3).tolist():
            result.warnings.append(f"frame {options.frame!r} ignored: {self.name} scenes are written in the "
                                   f"{self.target_convention} convention (Z up, X forward)")
        result.warnings.extend(prepared.notes)
        result.skipped.extend(prepared.skipped)
        result.warnings.extend(f"left out {name}: {reason}" for name, reason in prepared.skipped)
        return result

    def world_pose(self, pose: Pose, convention: str) -> Pose:
        """An object pose from the scene's convention to the consumer's world."""
        t, q = convert_poses(pose.translation, pose.quaternion, convention, self.target_convention, camera=False)
        return Pose(t, q)

    def world_direction(self, direction: npt.ArrayLike, convention: str) -> npt.NDArray[np.float64]:
        """A direction (or point) from the scene's convention to the consumer's world."""
        return convert_points(direction, convention, self.target_convention)
