"""The public API: `robokit.open`, `resample`, `export` (a callable package), `frames`, stream types, errors."""

from __future__ import annotations

import importlib.metadata
import threading
from pathlib import Path
from typing import Any

import pytest

import robokit
from robokit.errors import OptionError

OPTS = {"fps": 10, "cameras": ["front"], "action": "joints/position_delta"}


def test_the_names_are_public() -> None:
    assert callable(robokit.open) and callable(robokit.resample) and callable(robokit.export)
    assert robokit.frames.to_order is not None
    assert issubclass(robokit.NumericStream, robokit.Stream) and issubclass(robokit.ImageStream, robokit.Stream)
    assert all(issubclass(e, robokit.RobokitError) for e in (robokit.SourceError, robokit.OptionError,
                                                               robokit.ChannelError, robokit.ConversionError))
    assert set(robokit.__all__) <= set(dir(robokit))


def test_version_comes_from_the_installed_metadata() -> None:
    assert robokit.__version__ == importlib.metadata.version("robokit")


def test_the_export_package_stays_a_package() -> None:
    """Calling it exports; its modules still import, and patching them by name still reaches them."""
    from robokit.export import pipeline

    assert robokit.export.pipeline is pipeline
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("robokit.export.cache.default_root", lambda: Path("elsewhere"))
        assert robokit.export.cache.default_root() == Path("elsewhere")


def test_export_waits_by_default(sample_bag: Path, tmp_path: Path) -> None:
    job = robokit.export([sample_bag], ["lerobot"], tmp_path / "out", OPTS)
    assert job.status == "done" and "lerobot/meta/info.json" in job.files
    assert job.wait() is job


def test_export_in_the_background(sample_bag: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from robokit.export.job import read_items

    release = threading.Event()

    def gated(*args: Any, **kwargs: Any) -> Any:  # the export holds before reading until the test has looked
        release.wait(60)
        return read_items(*args, **kwargs)

    monkeypatch.setattr("robokit.export.job.read_items", gated)
    job = robokit.export([sample_bag], ["lerobot"], tmp_path / "out", OPTS, wait=False)
    assert job.status == "running" and job.files == []
    release.set()
    assert job.wait() is job and job.status == "done" and "lerobot/meta/info.json" in job.files
    assert (tmp_path / "out" / "export.json").is_file()


def test_background_errors_are_raised_by_wait(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="unknown format"):  # usage errors: at once, before any thread
        robokit.export([tmp_path], ["parquet"], tmp_path / "out", wait=False)
    job = robokit.export([tmp_path / "missing.mcap"], ["lerobot"], tmp_path / "out", OPTS, wait=False)
    with pytest.raises(robokit.RobokitError, match="nothing converted"):
        job.wait()
    assert job.status == "failed"
