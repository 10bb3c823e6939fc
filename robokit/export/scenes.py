"""Scene inputs (descriptions, splat PLYs, meshes) go to scene writers rather than the recording readers.

The scene package is imported on first use: exports of recordings alone never pay for USD or trimesh.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from robokit.converters.options import WriterOptions
from robokit.timeline import Episode


def _scene() -> Any:
    return importlib.import_module("robokit.converters.scene")


def is_scene_input(path: Path) -> bool:
    """True for scene descriptions, splat PLYs and meshes."""
    try:
        return bool(_scene().is_scene_file(path))
    except ImportError:
        return False


def load_scene(paths: Sequence[Path], episodes: Sequence[Episode], options: WriterOptions) -> Any:
    """The scene of `paths`, with camera trajectories from `episodes`."""
    return _scene().load_scene(list(paths), list(episodes), options)
