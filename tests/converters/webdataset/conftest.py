"""WebDataset shards written once per session from the generated sample recordings (small shards allowed)."""

from __future__ import annotations

from pathlib import Path

import pytest

import robokit
from robokit.converters.options import WriterOptions
from robokit.converters.webdataset.writer import WebDatasetWriter

CHANNELS = ["joints/position", "front/rgb", "wrist/rgb", "tf/tool0"]
SMALL = WebDatasetWriter(shard_mb_range=(0.01, 1024.0))  # test data is far below the real 256 MB minimum


def write(sample_dir: Path, out: Path, **extra: object) -> Path:
    options = WriterOptions(fps=15, action="joints/position_delta", poses=("tf/tool0",),
                            extra={"dataset_name": "sample", "wds_shard_mb": 0.5, **extra})
    SMALL.write(robokit.open(sorted(sample_dir.iterdir())), out, options)
    return out / "webdataset"


@pytest.fixture(scope="session")
def wds_steps(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(sample_dir, tmp_path_factory.mktemp("wds-steps"))


@pytest.fixture(scope="session")
def wds_episodes(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(sample_dir, tmp_path_factory.mktemp("wds-episodes"), wds_samples="episode")
