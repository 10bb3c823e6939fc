"""A LeRobot dataset written once per session from the generated sample recordings."""

from __future__ import annotations

from pathlib import Path

import pytest

import robokit
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions


@pytest.fixture(scope="session")
def lerobot_root(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lerobot-out")
    episodes = robokit.open(sorted(sample_dir.iterdir()))
    options = WriterOptions(fps=15, action="joints/position_delta", poses=("tf/tool0",), robot_type="sample_arm")
    get_converter("lerobot").write(episodes, out, options)
    return out / "lerobot"
