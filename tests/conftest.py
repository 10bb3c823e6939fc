"""Shared fixtures: generated sample recordings (the project's own data) and the shared public fixtures."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from robokit.converters.options import WriterOptions
from robokit.samples import SampleSpec, write_samples

# The ROS recording generators (fixtures `bags`, `ros1_msgs`, `ros2_msgs`) serve reader tests in several folders.
pytest_plugins = ["tests.ros.recordings"]

if sys.platform.startswith("linux"):  # MuJoCo picks its GL backend on first import, whichever test imports it
    os.environ.setdefault("MUJOCO_GL", "egl")

LEROBOT_OPTIONS = WriterOptions(fps=15, action="joints/position_delta", poses=("tf/tool0",), robot_type="sample_arm")
SHARED_FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"


@pytest.fixture(autouse=True)
def _private_export_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never read or fill the user's export cache."""
    monkeypatch.setenv("ROBOKIT_CACHE", str(tmp_path_factory.getbasetemp() / "export-cache"))


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two generated sample episodes (ROS 2 bags, MCAP storage), written once per test session."""
    out = tmp_path_factory.mktemp("samples")
    write_samples(out, 2, SampleSpec(duration_s=3.0))
    return out


@pytest.fixture(scope="session")
def sample_bag(sample_dir: Path) -> Path:
    return sample_dir / "episode_000"


@pytest.fixture()
def shared_fixtures() -> Path:
    if not SHARED_FIXTURES.is_dir():
        pytest.skip("../shared/fixtures is not present")
    return SHARED_FIXTURES


def _write_lerobot(sample_dir: Path, out: Path, options: WriterOptions) -> Path:
    import robokit
    from robokit.converters import get_converter

    get_converter("lerobot").write(robokit.open(sorted(sample_dir.iterdir())), out, options)
    return out / "lerobot"


@pytest.fixture(scope="session")
def lerobot_root(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LeRobot dataset written once per session from the sample recordings (writer, reader and checks)."""
    return _write_lerobot(sample_dir, tmp_path_factory.mktemp("lerobot-out"), LEROBOT_OPTIONS)


@pytest.fixture(scope="session")
def lerobot_rolled_root(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same dataset as `lerobot_root` with tiny file limits: every episode in a data and video file of its own."""
    options = replace(LEROBOT_OPTIONS, extra={"data_file_mb": 0.001, "video_file_mb": 0.001})
    return _write_lerobot(sample_dir, tmp_path_factory.mktemp("lerobot-rolled"), options)
