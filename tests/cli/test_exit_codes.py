"""Exit codes and export.json tell the truth: 0 every format written, 1 some produced nothing, 2 usage errors."""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from robokit.cli import main


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["convert", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _error_line(err: str) -> str:
    """The one `robokit: error:` line of stderr (exactly one, no traceback)."""
    lines = [line for line in err.splitlines() if line.startswith("robokit: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _status(out: Path) -> str:
    status: str = json.loads((out / "export.json").read_text())["status"]
    return status


def test_all_formats_written_exit_0(sample_bag: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, str(sample_bag), "--to", "mcap", "--out", str(tmp_path / "o"), "--fps", "5")
    assert code == 0 and "robokit: error" not in err
    assert _status(tmp_path / "o") == "done"


def test_a_format_that_produced_nothing_exits_1(sample_bag: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    code, summary, err = _run(capsys, str(sample_bag), "--to", "mcap", "--to", "lerobot", "--out", str(out),
                              "--fps", "5", "--state", "nosuch/position", "--codec", "h264")
    assert code == 1
    line = _error_line(err)
    assert "1 of 2 format(s) produced nothing" in line and "lerobot" in line and "nosuch" in line
    assert "lerobot: nothing written:" in summary and "nosuch" in summary
    record = json.loads((out / "export.json").read_text())
    assert record["status"] == "partial"
    assert record["formats"]["lerobot"]["status"] == "failed" and record["formats"]["mcap"]["status"] == "written"
    assert (out / "mcap").is_dir() and not (out / "lerobot").exists()


def test_nothing_converted_exits_1_and_records_failed(sample_bag: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    code, _, err = _run(capsys, str(sample_bag), "--to", "lerobot", "--out", str(out), "--state", "nosuch/position",
                        "--codec", "h264")
    assert code == 1
    assert "nothing converted" in _error_line(err)
    assert _status(out) == "failed"


@pytest.mark.parametrize(("args", "message"), [
    (["--crf", "1000"], "crf 1000: expected an integer from 0 to 63"),
    (["--codec", "h264", "--crf", "60"], "crf 60: expected 0 to 51 for h264"),
    (["--crf", "x"], "crf 'x': expected an integer"),
    (["--gop", "0"], "gop 0: expected an integer from 1 to"),
    (["--preset", "nosuch", "--codec", "h264"], "preset 'nosuch': expected one of ultrafast"),
    (["--video-file-mb", "-1"], "video_file_mb -1: expected a number above 0 up to"),
    (["--fps", "inf"], "fps inf: expected a number above 0 up to 1000"),
    (["--fps", "1e9"], "fps 1000000000.0: expected a number above 0 up to 1000"),
    (["--fps", "100000"], "up to 1000"),
    (["--fps", "nan"], "fps nan"),
    (["--fps", "500"], "fps 500: av1 video is at most 240 fps"),
    (["--image-size", "100000x100000"], "image_size 100000x100000: width and height must be 1 to 8192"),
    (["--image-size", "321x240"], "image_size 321x240: LeRobot video needs an even width and height"),
    (["--robot-type", "arm\x1b[31m"], "robot_type 'arm\\x1b[31m': control characters are not allowed"),
    (["--set-task", "pick\nplace"], "control characters are not allowed"),
    (["--robot-type", "arm\udcff"], "robot_type: not valid UTF-8 text"),
    (["--workers", "100000"], "workers 100000: expected an integer from 0 (automatic) to 256"),
    (["--workers", "-3"], "workers -3"),
])
def test_bad_options_are_refused_before_any_work(sample_bag: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 args: list[str], message: str) -> None:
    out = tmp_path / "o"
    code, _, err = _run(capsys, str(sample_bag), "--to", "lerobot", "--out", str(out), *args)
    assert code == 2
    assert message in _error_line(err)
    assert not out.exists()  # refused before reading or writing anything


def test_format_options_from_config_and_api_are_checked(sample_bag: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from robokit.errors import OptionError
    from robokit.export import export

    cfg = tmp_path / "export.yaml"
    cfg.write_text(f"training_export:\n  to: [rlds]\n  out: {tmp_path / 'o'}\n  rlds_shard_mb: 1e6\n")
    code, _, err = _run(capsys, str(sample_bag), "--config", str(cfg))
    assert code == 2 and "rlds_shard_mb 1e6: expected a number above 0 up to 1024" in _error_line(err)
    for options, message in [({"jpeg_quality": 1000}, "jpeg_quality 1000"), ({"split": 1.0}, "split 1"),
                             ({"dataset_name": "../up"}, "dataset_name '../up'"), ({"fps": float("inf")}, "fps inf"),
                             ({"wds_shard_mb": "huge"}, "wds_shard_mb 'huge'")]:
        fmt = "webdataset" if "wds_shard_mb" in options else "rlds"
        with pytest.raises(OptionError, match=message):
            export([sample_bag], [fmt], tmp_path / "api", options)
    with pytest.raises(OptionError, match="workers -1"):
        export([sample_bag], ["mcap"], tmp_path / "api", {}, workers=-1)
    assert not (tmp_path / "o").exists() and not (tmp_path / "api").exists()


@pytest.mark.parametrize(("flag", "key", "value", "message"), [
    ("--only-jsonl=maybe", "only_jsonl", "maybe", "only_jsonl 'maybe': expected true or false"),
    ("--quat-order=zyxw", "quat_order", "zyxw", "quat_order 'zyxw': expected one of xyzw, wxyz"),
])
def test_a_bad_value_is_refused_on_every_path(sample_bag: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              flag: str, key: str, value: str, message: str) -> None:
    """The shell, a --config file and the Python API check an option by the same declaration."""
    from robokit.errors import OptionError
    from robokit.export import export

    out = tmp_path / "o"
    code, _, err = _run(capsys, str(sample_bag), "--to", "viam-binary", "--out", str(out), flag)
    assert code == 2 and message in _error_line(err)
    cfg = tmp_path / "export.yaml"
    cfg.write_text(f"training_export:\n  to: [viam-binary]\n  out: {out}\n  {key}: {value}\n")
    code, _, err = _run(capsys, str(sample_bag), "--config", str(cfg))
    assert code == 2 and message in _error_line(err)
    with pytest.raises(OptionError, match=message):
        export([sample_bag], ["viam-binary"], out, {key: value})
    with pytest.raises(OptionError, match=message):
        export([sample_bag], ["viam-binary"], out, **{key: value})
    assert not out.exists()


def test_a_boolean_given_as_text_on_every_path(sample_bag: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """only_jsonl false (text from a config file or a service) writes the image files, as the flag's absence does."""
    from robokit.export import export

    cfg = tmp_path / "export.yaml"
    cfg.write_text(f"training_export:\n  to: [viam-binary]\n  out: {tmp_path / 'c'}\n  only_jsonl: 'false'\n"
                   "  overwrite: 'false'\n")
    assert _run(capsys, str(sample_bag), "--config", str(cfg), "--no-cache")[0] == 0
    assert _run(capsys, str(sample_bag), "--to", "viam-binary", "--out", str(tmp_path / "s"), "--only-jsonl=false",
                "--no-cache")[0] == 0
    export([sample_bag], ["viam-binary"], tmp_path / "a", only_jsonl="false", use_cache=False)
    for out in ("c", "s", "a"):
        assert (tmp_path / out / "viam-binary" / "data").is_dir(), out


class _FullDisk:
    """A file-system double: files opened for writing under `root` accept no byte (ENOSPC), like a full disk."""

    def __init__(self, root: Path, real_open: Any) -> None:
        self.root, self.real_open = str(root), real_open

    def __call__(self, file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = self.real_open(file, mode, *args, **kwargs)
        if isinstance(file, str | os.PathLike) and str(file).startswith(self.root) and set(mode) & set("wax+"):
            def refuse(*_: Any) -> int:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(file))
            handle.write = refuse
        return handle


@pytest.fixture()
def full_disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    def fill(root: Path) -> None:
        double = _FullDisk(root, io.open)
        monkeypatch.setattr(io, "open", double)
        monkeypatch.setattr("builtins.open", double)
    yield fill


def test_full_disk_is_one_line_exit_1_and_keeps_earlier_output(sample_bag: Path, tmp_path: Path, full_disk: Any,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    assert _run(capsys, str(sample_bag), "--to", "mcap", "--out", str(out), "--fps", "5", "--no-cache")[0] == 0
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    full_disk(out)
    code, _, err = _run(capsys, str(sample_bag), "--to", "mcap", "--out", str(out), "--fps", "4", "--overwrite",
                        "--no-cache")
    assert code == 1
    line = _error_line(err)
    assert "No space left on device" in line and "[" not in line.partition("robokit: error:")[2][:2]
    assert {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == before  # intact, no staging left
    assert not [p for p in out.iterdir() if ".partial" in p.name]


def test_full_tmpfs(sample_bag: Path, tmp_path: Path) -> None:
    """The same on a real 1 MB tmpfs, where the machine lets us mount one (root with CAP_SYS_ADMIN)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        with (mnt / "filler").open("wb", buffering=0) as filler, pytest.raises(OSError):  # fill it up to the last page
            for _ in range(1000):
                filler.write(b"\0" * 4096)
        run = subprocess.run([str(Path(sys.executable).parent / "robokit"), "convert", str(sample_bag), "--to",
                              "lerobot", "--codec", "h264", "--out", str(mnt / "o"), "--no-cache", "-q"],
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 1, run.stderr
        assert len(run.stderr.strip().splitlines()) <= 3 and "Traceback" not in run.stderr
        assert "No space left on device" in run.stderr
        assert not list((mnt / "o").glob(".*partial*")) if (mnt / "o").exists() else True
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.parametrize(("args", "message"), [(["--episodes", "100000"], "episodes 100000: expected 1 to 1000"),
                                               (["--duration", "inf"], "duration inf s"),
                                               (["--width", "100000"], "width and height must be 1 to 4096")])
def test_sample_options_are_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                    message: str) -> None:
    assert main(["sample", "--out", str(tmp_path / "s"), *args]) == 2
    assert message in _error_line(capsys.readouterr().err)
    assert not (tmp_path / "s").exists()


def test_file_system_errors_are_one_readable_line() -> None:
    import shutil

    from robokit.cli import os_error_line

    copy_failed = shutil.Error([("/a/x", "/b/x", "[Errno 28] No space left on device: '/b/x'"), ("/a/y", "/b/y", "e")])
    assert os_error_line(copy_failed) == "[Errno 28] No space left on device: '/b/x' (and 1 more)"
    assert os_error_line(OSError(errno.ENOSPC, "No space left on device", "/out/export.json")) == \
        "No space left on device: /out/export.json"
    assert os_error_line(OSError("Error writing bytes to file.\nDetail: [errno 28]")) == \
        "Error writing bytes to file. Detail: [errno 28]"


def test_sim_replay_refuses_a_nan_tolerance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "replay", str(tmp_path), "--model", str(tmp_path / "m.xml"), "--tolerance", "nan"]) == 2
    assert "tolerance nan" in _error_line(capsys.readouterr().err)
