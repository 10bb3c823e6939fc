from __future__ import annotations

import json
from pathlib import Path

import pytest

from robokit.cli import main


def test_convert_with_format_option_and_summary(sample_bag: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["convert", str(sample_bag), "--to", "lerobot", "--out", str(tmp_path / "o"), "--fps", "10",
                 "--codec", "h264", "--crf", "30"])
    assert code == 0
    out = capsys.readouterr().out
    assert "lerobot" in out and "written" in out
    info = json.loads((tmp_path / "o" / "lerobot" / "meta" / "info.json").read_text())
    assert info["features"]["observation.images.front"]["info"]["video.codec"] == "h264"


def test_convert_errors_are_one_line(sample_bag: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", str(sample_bag), "--to", "lerobot", "--out", str(tmp_path), "--crf", "x"]) == 2
    assert "expected an integer" in capsys.readouterr().err
    assert main(["convert", str(sample_bag), "--out", str(tmp_path)]) == 2
    assert "give --to" in capsys.readouterr().err
    assert main(["convert", str(sample_bag), "--to", "lerobot", "--out", str(tmp_path / "c"),
                 "--camera", "top"]) == 1  # the inputs, not the command line, could not be converted
    err = capsys.readouterr().err
    assert "camera 'top/rgb' not found" in err and "Traceback" not in err


def test_convert_config_file(sample_bag: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "export.yaml"
    cfg.write_text(f"training_export:\n  to: [lerobot]\n  out: {tmp_path / 'o'}\n  fps: 5\n  crf: 40\n")
    assert main(["convert", str(sample_bag), "--config", str(cfg), "--fps", "10"]) == 0
    assert json.loads((tmp_path / "o" / "lerobot" / "meta" / "info.json").read_text())["fps"] == 10


def test_cache_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cache", "ls"]) == 0
    assert "entries in" in capsys.readouterr().out
    assert main(["cache", "rm", "--all"]) == 0


def test_out_that_is_a_file(sample_bag: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "afile"
    target.write_text("x")
    assert main(["convert", str(sample_bag), "--to", "lerobot", "--out", str(target)]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_help_shows_every_default(capsys: pytest.CaptureFixture[str]) -> None:
    main(["convert", "--help"])
    capsys.readouterr()
    main(["convert", "--help"])  # a second call in the same process lists the format options once, not twice
    out = " ".join(capsys.readouterr().out.split())  # help is wrapped to the terminal's width
    assert out.count("Format options (pass as --name VALUE):") == 1
    for text in ("Output rate (a number above 0 up to 1000; default: slowest camera, else state)",
                 "(one of nearest, linear; default: nearest)", "--codec [av1|h264]",
                 "(default: all)", "(text; default: joints/position)", "default: rayform)",
                 "(one of xyzw, wxyz; default: wxyz)",
                 "fewer when each episode encodes several videos at once. [default: 0]",
                 "naming the sequence zip (default: from sources)"):
        assert text in out, text


def test_out_may_be_a_url(sample_bag: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import fsspec

    assert main(["convert", str(sample_bag), "--to", "mcap", "--out", "memory://robokit-cli/out", "-q"]) == 0
    assert fsspec.filesystem("memory").exists("/robokit-cli/out/mcap/episode_000.mcap")
    assert main(["convert", str(sample_bag), "--to", "mcap", "--out", "s4://bucket/out"]) == 2
    assert "unknown file system protocol 's4'" in capsys.readouterr().err


def test_overwrite_never_replaces_an_input(sample_bag: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    out = tmp_path / "out"
    assert main(["convert", str(sample_bag), "--to", "mcap", "--out", str(out), "--fps", "10", "--no-cache"]) == 0
    (source,) = (out / "mcap").glob("*.mcap")
    before = source.read_bytes()
    capsys.readouterr()
    code = main(["convert", str(source), "--to", "mcap", "--out", str(out), "--overwrite", "--no-cache"])
    err = capsys.readouterr().err
    assert code != 0 and "lies inside" in err and "Traceback" not in err
    assert source.read_bytes() == before
