"""One short simulated recording per test session (small images), shared by the simulator tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from robokit.sim.record import RecordedEpisode, RecordSpec, record

SPEC = RecordSpec(duration_s=2.0, width=96, height=72, seed=3)


@pytest.fixture(scope="session")
def spec() -> RecordSpec:
    return SPEC


@pytest.fixture(scope="session")
def recording(tmp_path_factory: pytest.TempPathFactory) -> RecordedEpisode:
    """A 2 s episode at 96x72 in `<tmp>/episode_000/`, with `<tmp>/scene.xml` beside it."""
    (episode,) = record(tmp_path_factory.mktemp("sim"), 1, SPEC)
    return episode


@pytest.fixture(scope="session")
def model_file(recording: RecordedEpisode) -> Path:
    return recording.path.parent / "scene.xml"
