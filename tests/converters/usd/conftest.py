"""A USD scene written once per session from the sample scene plus a sample recording's cameras."""

from __future__ import annotations

from pathlib import Path

import pytest

import robokit
from robokit.converters import WriteResult, get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.scene import load_scene, write_sample_scene


@pytest.fixture(scope="session")
def scene_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_scene(tmp_path_factory.mktemp("scene") / "sample")


@pytest.fixture(scope="session")
def usd_written(scene_file: Path, sample_bag: Path, tmp_path_factory: pytest.TempPathFactory
                ) -> tuple[Path, WriteResult]:
    options = WriterOptions(extra={"collision_from_splat": True})
    scene = load_scene([scene_file], robokit.open(sample_bag), options)
    out = tmp_path_factory.mktemp("usd-out")
    result = get_converter("usd").write_scene(scene, out, options)  # type: ignore[attr-defined]
    return out / "usd", result
