"""An RLDS dataset written once per session from the generated sample recordings (train + val, small shards)."""

from __future__ import annotations

from pathlib import Path

import pytest

import robokit
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions

RLDS_OPTIONS = WriterOptions(fps=15, action="joints/position_delta", poses=("tf/tool0",), robot_type="sample_arm",
                             extra={"dataset_name": "sample_arm", "split": 0.5, "rlds_shard_mb": 0.05})
CHANNELS = ["joints/position", "front/rgb", "wrist/rgb", "tf/tool0"]


@pytest.fixture(scope="session")
def rlds_out(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rlds-out")
    get_converter("rlds").write(robokit.open(sorted(sample_dir.iterdir())), out, RLDS_OPTIONS)
    return out / "rlds"


@pytest.fixture(scope="session")
def rlds_root(rlds_out: Path) -> Path:
    return rlds_out / "sample_arm" / "1.0.0"
