"""A scene export says what it wrote (objects, splats, colliders, cameras), and a recording that brings no
camera to the scene says so."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh

from robokit.cli import main
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.timeline import Episode, EpisodeMeta, NumericStream


@pytest.fixture()
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    """A box mesh and an MCAP recording of joints only (no camera)."""
    mesh = tmp_path / "crate.stl"
    trimesh.creation.box((0.4, 0.3, 0.3)).apply_translation((0, 0, 0.15)).export(mesh)
    t = np.arange(5, dtype=np.int64) * 100_000_000 + 1_000_000_000
    joints = NumericStream("joints/position", t, np.zeros((5, 2)), ("a", "b"), "rad")
    get_converter("mcap").write([Episode(EpisodeMeta("mem://arm", "arm"), {"joints/position": joints})],
                                tmp_path / "rec", WriterOptions())
    (recording,) = (tmp_path / "rec" / "mcap").glob("*.mcap")
    return mesh, recording


def test_scene_export_prints_what_it_wrote(inputs: tuple[Path, Path], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    mesh, recording = inputs
    code = main(["convert", str(mesh), str(recording), "--to", "mjcf", "--out", str(tmp_path / "out"),
                 "--collision", "convex-hull", "--no-cache"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    everything = captured.out + captured.err + (tmp_path / "out" / "export.log").read_text()
    assert "mjcf: 1 object(s), 0 splat(s), 1 collider(s), 0 camera(s)" in everything
    assert "wrote 0 episode(s)" not in everything
    assert "recording contributed nothing to the scene (it has no camera" in everything
