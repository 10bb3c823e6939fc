from __future__ import annotations

from pathlib import Path

import pytest
import trimesh

from robokit.cli import main
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.scene import load_scene


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """USD and MJCF outputs of a small one-mesh scene (convex hulls only: fast)."""
    root = tmp_path_factory.mktemp("check")
    mesh = root / "crate.stl"
    trimesh.creation.box((0.4, 0.3, 0.3)).apply_translation((0, 0, 0.15)).export(mesh)
    options = WriterOptions(extra={"collision": "convex-hull"})
    scene = load_scene([mesh], [], options)
    for name in ("usd", "mjcf"):
        get_converter(name).write_scene(scene, root / "out", options)  # type: ignore[attr-defined]
    return root / "out"


def test_all_pass(outputs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(outputs)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["folder", "format", "result", "reason"]
    rows = {line.split()[1]: line.split()[2] for line in lines[1:]}
    assert rows == {"mjcf": "pass", "usd": "pass"}


def test_a_format_folder_itself(outputs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(outputs / "usd")]) == 0
    assert "usd" in capsys.readouterr().out


def test_failures_give_reasons_and_exit_1(outputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mjcf").mkdir()
    (tmp_path / "mjcf" / "scene.xml").write_text("<mujoco><worldbody><geom type='sphere'/></worldbody></mujoco>")
    (tmp_path / "usd").mkdir()
    assert main(["check", str(tmp_path), str(outputs)]) == 1
    captured = capsys.readouterr()
    fails = [line for line in captured.out.splitlines() if " FAIL " in line]
    assert len(fails) == 2
    assert any("could not compile" in line for line in fails) and any("no scene.usda" in line for line in fails)
    assert "2 of 4 failed" in captured.err


def test_no_format_folder_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no output folder of a known format" in err and "usd" in err and "Traceback" not in err
    assert main(["check", str(tmp_path / "nope")]) == 2
