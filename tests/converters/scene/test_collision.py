from __future__ import annotations

import numpy as np
import pytest
import trimesh

from robokit.converters.scene import Pose, Scene, SceneObject, SceneOptions, prepare_scene
from robokit.converters.scene import collision as col
from robokit.converters.scene.sample import BIN_SIZE, BIN_WALL, open_box
from robokit.errors import ConversionError


def test_hull_of_a_flat_mesh_is_thickened() -> None:
    quad = trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], [[0, 1, 2], [0, 2, 3]])
    hull = col.convex_hull(quad.vertices, "sheet")
    assert hull.is_volume and hull.extents == pytest.approx([1, 1, col.MIN_THICKNESS])
    line = col.convex_hull([[0, 0, 0], [1, 1, 1]], "stick")
    assert line.is_volume and line.volume > 0


def test_bin_decomposes_into_bounded_convex_pieces() -> None:
    mesh = open_box(*BIN_SIZE, BIN_WALL)
    pieces = col.decompose(mesh, "bin", max_pieces=6, threshold=0.05)
    assert 2 <= len(pieces) <= 6
    assert all(p.is_volume and p.is_convex for p in pieces)
    union = np.vstack([p.bounds for p in pieces])
    assert union.min(axis=0) == pytest.approx(mesh.bounds[0], abs=0.01)
    assert union.max(axis=0) == pytest.approx(mesh.bounds[1], abs=0.01)
    hull = mesh.convex_hull
    assert sum(p.volume for p in pieces) < 0.5 * hull.volume  # the cavity stays open
    assert col.decompose(mesh, "bin", 6, 0.05) is pieces  # cached by content


def test_convex_mesh_skips_decomposition(monkeypatch: pytest.MonkeyPatch) -> None:
    import coacd

    monkeypatch.setattr(coacd, "run_coacd", lambda *a, **k: pytest.fail("CoACD called on a convex mesh"))
    (piece,) = col.decompose(trimesh.creation.box((0.1, 0.1, 0.1)), "cube", 8, 0.05)
    assert piece.volume == pytest.approx(0.001)


def test_merge_pieces_keeps_the_bound_and_the_extent() -> None:
    boxes = [trimesh.creation.box((0.1, 0.1, 0.1)).apply_translation((0.1 * i, 0, 0)) for i in range(7)]
    merged = col.merge_pieces(boxes, 3, "row")
    assert len(merged) == 3
    assert np.vstack([m.bounds for m in merged]).min(axis=0) == pytest.approx([-0.05, -0.05, -0.05])
    assert sum(m.volume for m in merged) == pytest.approx(0.007)


def test_dynamic_triangle_mesh_becomes_a_decomposition() -> None:
    cube = SceneObject("cube", trimesh.creation.box(), dynamic=True, collision="mesh")
    mode, notes = col.effective_mode(cube, "convex-hull")
    assert mode == "convex-decomposition" and "cube" in notes[0]


def test_failed_decomposition_leaves_only_that_object_out(monkeypatch: pytest.MonkeyPatch) -> None:
    import coacd

    def boom(*args: object, **kwargs: object) -> list[object]:
        raise RuntimeError("qhull exploded")

    monkeypatch.setattr(coacd, "run_coacd", boom)
    scene = Scene(objects=[SceneObject("bin", open_box(0.31, 0.2, 0.12, 0.01)),
                           SceneObject("cube", trimesh.creation.box((0.05,) * 3), Pose(), dynamic=True, mass=0.1)])
    prepared = prepare_scene(scene, SceneOptions(collision="convex-decomposition"))
    assert [p.obj.name for p in prepared.objects] == ["cube"]
    ((name, reason),) = prepared.skipped
    assert name == "bin" and "object 'bin': convex decomposition failed: RuntimeError: qhull exploded" in reason
    with pytest.raises(ConversionError, match="object 'bin'"):
        col.collision_shapes(scene.objects[0], "convex-decomposition", 4, 0.05)


def test_mujoco_mode_decomposes_non_convex_meshes_only() -> None:
    scene = Scene(objects=[SceneObject("bin", open_box(*BIN_SIZE, BIN_WALL), collision="mesh"),
                           SceneObject("box", trimesh.creation.box(), collision="mesh")])
    exact = prepare_scene(scene, SceneOptions())
    assert [p.shapes.mode for p in exact.objects] == ["mesh", "mesh"]
    hulls_only = prepare_scene(scene, SceneOptions(max_pieces=6), exact_meshes=False)
    assert [p.shapes.mode for p in hulls_only.objects] == ["convex-decomposition", "mesh"]
    assert any("bin: MuJoCo collides with the convex hull" in n for n in hulls_only.notes)


def test_mass_from_density_when_not_given() -> None:
    scene = Scene(objects=[SceneObject("block", trimesh.creation.box((0.1, 0.2, 0.3)), dynamic=True, density=500)])
    (item,) = prepare_scene(scene, SceneOptions(collision="convex-hull")).objects
    assert item.mass is not None and item.mass.mass == pytest.approx(0.006 * 500)
    assert np.diag(item.mass.inertia) == pytest.approx(3.0 / 12 * np.array([0.13, 0.10, 0.05]))


def test_open_surface_is_covered_by_boxes_keeping_its_cavity() -> None:
    box = trimesh.creation.box((0.2, 0.2, 0.2))
    lidless = trimesh.Trimesh(box.vertices, box.faces[box.face_normals[:, 2] < 0.5])  # a tray: top removed
    shapes = col.collision_shapes(SceneObject("tray", lidless), "convex-decomposition", 8, 0.05)
    assert len(shapes.pieces) == 5 and all(p.is_volume for p in shapes.pieces)  # bottom and four walls
    assert sum(p.volume for p in shapes.pieces) < 0.2 * box.volume
    assert "tray: mesh is not watertight" in shapes.notes[0]
    bowl = trimesh.creation.icosphere(3, 0.1)
    bowl.update_faces(bowl.face_normals[:, 2] < 0.7)
    assert len(col.collision_shapes(SceneObject("bowl", bowl), "convex-decomposition", 6, 0.05).pieces) == 6


def test_small_holes_are_filled(monkeypatch: pytest.MonkeyPatch) -> None:
    import coacd

    ball = trimesh.creation.icosphere(3, 0.1)
    holed = trimesh.Trimesh(ball.vertices, ball.faces[1:])  # one of 1280 triangles missing
    monkeypatch.setattr(coacd, "run_coacd", lambda *a, **k: pytest.fail("a closed ball is convex"))
    shapes = col.collision_shapes(SceneObject("ball", holed), "convex-decomposition", 8, 0.05)
    assert len(shapes.pieces) == 1 and shapes.pieces[0].volume == pytest.approx(ball.volume)
    assert "small holes" in shapes.notes[0]
