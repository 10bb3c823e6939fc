from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh

from robokit.converters.scene.meshes import clean_mesh, load_mesh
from robokit.errors import SourceError


@pytest.mark.parametrize("suffix", [".obj", ".stl", ".ply", ".glb"])
def test_loads_every_mesh_format(tmp_path: Path, suffix: str) -> None:
    box = trimesh.creation.box((0.1, 0.2, 0.3))
    path = tmp_path / f"box{suffix}"
    box.export(path)
    mesh = load_mesh(path, "box")
    assert mesh.bounds == pytest.approx(box.bounds)


def test_broken_and_missing_meshes_name_the_object(tmp_path: Path) -> None:
    (tmp_path / "broken.stl").write_bytes(b"\x00" * 10)
    with pytest.raises(SourceError, match=r"object 'crate'.*broken\.stl"):
        load_mesh(tmp_path / "broken.stl", "crate")
    with pytest.raises(SourceError, match=r"object 'crate': mesh file .*nope\.obj does not exist"):
        load_mesh(tmp_path / "nope.obj", "crate")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(SourceError, match="not a mesh file"):
        load_mesh(tmp_path / "notes.txt", "crate")


def test_clean_drops_degenerate_repeated_and_non_finite_faces() -> None:
    box = trimesh.creation.box()
    vertices = np.vstack([box.vertices, [[np.nan, 0, 0], [0, 0, 0]]])
    repeated = box.faces[0][::-1]  # the same triangle again, reversed
    extra = [[0, 0, 1], [8, 0, 1], repeated]  # degenerate, on a NaN vertex, repeated
    mesh = trimesh.Trimesh(vertices, np.vstack([box.faces, extra]), process=False)
    cleaned, notes = clean_mesh(mesh, "box")
    assert len(cleaned.faces) == 12 and cleaned.is_watertight and cleaned.volume == pytest.approx(1.0)
    assert any("non-finite" in n for n in notes) and any("degenerate" in n for n in notes)


def test_clean_rejects_a_mesh_with_nothing_left() -> None:
    flat = trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [[0, 1, 2]], process=False)
    with pytest.raises(SourceError, match="object 'line': mesh has no usable triangles"):
        clean_mesh(flat, "line")
