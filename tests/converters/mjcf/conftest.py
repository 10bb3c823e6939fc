"""An MJCF scene written once per session from the sample scene plus a sample recording's cameras."""

from __future__ import annotations

from pathlib import Path

import pytest

import robokit
from robokit.converters import WriteResult, get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.scene import Scene, load_scene, write_sample_scene


@pytest.fixture(scope="session")
def scene_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_scene(tmp_path_factory.mktemp("scene") / "sample")


@pytest.fixture(scope="session")
def sample_scene(scene_file: Path, sample_bag: Path) -> Scene:
    return load_scene([scene_file], robokit.open(sample_bag), WriterOptions())


@pytest.fixture(scope="session")
def mjcf_written(sample_scene: Scene, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, WriteResult]:
    out = tmp_path_factory.mktemp("mjcf-out")
    options = WriterOptions(extra={"collision_from_splat": True})
    result = get_converter("mjcf").write_scene(sample_scene, out, options)  # type: ignore[attr-defined]
    return out / "mjcf", result
