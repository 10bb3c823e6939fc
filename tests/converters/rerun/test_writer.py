"""`--to rerun` without rerun-sdk (the dev environment): a usage error naming the extra, before anything is read;
robokit's own structural check of a rerun folder. The recordings themselves are tested in test_conformance.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from robokit.cli import main
from robokit.converters import get_converter
from robokit.converters.episodes import file_name
from robokit.converters.options import WriterOptions
from robokit.converters.registry import checked_options
from robokit.errors import OptionError


@pytest.fixture()
def no_rerun(monkeypatch: pytest.MonkeyPatch) -> None:
    """rerun-sdk looks absent, whether or not this environment has it."""
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "rerun" else find_spec(name, *a))


@pytest.mark.usefixtures("no_rerun")
def test_without_the_sdk_options_name_the_extra() -> None:
    with pytest.raises(OptionError, match=r"rerun-sdk: pip install 'robokit\[rerun\]'"):
        checked_options(["mcap", "rerun"], WriterOptions())


@pytest.mark.usefixtures("no_rerun")
def test_without_the_sdk_convert_exits_2_before_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "does-not-exist"
    assert main(["convert", str(missing), "--to", "rerun", "--out", str(tmp_path / "out"), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "robokit[rerun]" in err and "does-not-exist" not in err
    assert not (tmp_path / "out").exists()


def test_structural_check(tmp_path: Path) -> None:
    rerun = get_converter("rerun")
    assert rerun.check(tmp_path) == [f"{tmp_path}: no .rrd files"]
    (tmp_path / "ep.rrd").write_bytes(b"MCAP not rrd")
    assert rerun.check(tmp_path) == ["ep.rrd: not an .rrd (no RRF2 header)"]


def test_file_names_are_safe_and_unique() -> None:
    used: set[str] = set()
    assert [file_name(i, used, ".rrd") for i in ("a/b", "a b", "..", "a_b")] == ["a_b.rrd", "a_b_2.rrd",
                                                                                 "episode.rrd", "a_b_3.rrd"]
