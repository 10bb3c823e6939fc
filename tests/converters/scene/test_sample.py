from __future__ import annotations

from pathlib import Path

import pytest

from robokit.cli import main
from robokit.converters.scene import read_splat_ply, write_sample_scene
from robokit.converters.scene.sample import open_box
from robokit.errors import RobokitError


def test_sample_scene_files(scene_file: Path) -> None:
    root = scene_file.parent
    assert sorted(p.name for p in (root / "meshes").iterdir()) == ["bin.ply", "cube.stl", "table.obj"]
    splats = read_splat_ply(root / "splat.ply")
    assert len(splats) > 10000 and splats.sh_degree == 1
    assert open_box(0.3, 0.2, 0.1, 0.01).is_watertight


def test_deterministic_and_refuses_a_full_folder(tmp_path: Path, scene_file: Path) -> None:
    again = write_sample_scene(tmp_path / "again")
    assert (again.parent / "splat.ply").read_bytes() == (scene_file.parent / "splat.ply").read_bytes()
    with pytest.raises(RobokitError, match="not empty"):
        write_sample_scene(tmp_path / "again")


def test_sample_command_writes_the_scene(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sample", "--scene", "--out", str(tmp_path / "s")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "s" / "scene.yaml")
