from __future__ import annotations

import json
from pathlib import Path

import pytest

from robokit.cli import main


def test_info_plain_lists_channels_counts_rates(sample_bag: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(sample_bag)]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line.split() for line in out.splitlines()[2:] if line.strip()}
    joint = lines["joints/position"]
    assert joint[4] == "301" and 95 < float(joint[5]) < 105
    assert lines["front/rgb"][4] == "91" and 29 < float(lines["front/rgb"][5]) < 31
    assert lines["wrist/rgb"][4] == "46" and 14 < float(lines["wrist/rgb"][5]) < 16
    assert "header" in joint


def test_info_json(sample_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bags = sorted(str(p) for p in sample_dir.iterdir())
    assert main(["info", "--json", *bags]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["episode_id"] for d in data] == ["episode_000", "episode_001"]
    counts = {s["channel"]: s["count"] for s in data[0]["streams"]}
    assert counts["joints/position"] == 301
    assert data[0]["start_utc"].startswith("2026-01-01T00:00")


def test_info_missing_path_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(tmp_path / "nope.bag")]) == 2
    err = capsys.readouterr().err
    assert "nope.bag" in err and "Traceback" not in err


def test_info_not_a_recording(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "notes.mcap"
    junk.write_text("hello")
    assert main(["info", str(junk)]) == 2
    assert "not a recording" in capsys.readouterr().err


def test_sample_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sample", "--out", str(tmp_path / "s"), "--episodes", "1", "--duration", "0.5"]) == 0
    assert (tmp_path / "s" / "episode_000" / "metadata.yaml").is_file()
