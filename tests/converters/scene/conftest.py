"""The generated sample scene (table, bin, cube, splat cloud), written once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from robokit.converters.scene import write_sample_scene


@pytest.fixture(scope="session")
def scene_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_scene(tmp_path_factory.mktemp("scene") / "sample")
