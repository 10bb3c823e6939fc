from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from robokit.converters.options import WriterOptions
from robokit.converters.scene import GroundPlane, Scene, SceneOptions, load_scene, prepare_scene
from robokit.converters.scene.sample import CRATE
from robokit.converters.scene.splat_collision import splat_collision


def test_builds_a_solid_for_the_uncovered_crate_only(scene_file: Path) -> None:
    scene = load_scene([scene_file], [], WriterOptions())
    obj, notes = splat_collision(scene, scene.splats[0], 0.02, 0.5)
    assert obj is not None and obj.visual is None and not obj.dynamic and obj.name == "splat_collision"
    mesh = obj.collision_source
    centre, size = np.array(CRATE[0]), np.array(CRATE[1])
    assert mesh.bounds[0] == pytest.approx(centre - size / 2, abs=0.05)
    assert mesh.bounds[1] == pytest.approx(centre + size / 2, abs=0.05)
    assert mesh.is_watertight and mesh.volume == pytest.approx(np.prod(size), rel=0.25)  # filled, not a shell
    assert "splat_collision" in notes[0]


def test_nothing_when_every_splat_is_covered(scene_file: Path) -> None:
    scene = load_scene([scene_file], [], WriterOptions())
    splat = scene.splats[0]
    low = splat.positions[:, 2] < 0.01  # only the floor splats
    floor_only = replace(splat, positions=splat.positions[low], opacities=splat.opacities[low])
    obj, notes = splat_collision(scene, floor_only, 0.02, 0.5)
    assert obj is None and "ground" in notes[0]


def test_occupancy_threshold_and_floaters(scene_file: Path) -> None:
    scene = load_scene([scene_file], [], WriterOptions())
    splat = scene.splats[0]
    faint = replace(splat, opacities=np.full(len(splat), 0.01, dtype=np.float32))
    obj, notes = splat_collision(scene, faint, 0.02, 0.5)
    assert obj is None and "occupancy" in notes[-1]
    lonely = Scene(ground=GroundPlane(), splats=[replace(splat, positions=np.array([[5, 5, 1]], np.float32),
                                                         opacities=np.ones(1, np.float32))])
    assert splat_collision(lonely, lonely.splats[0], 0.02, 0.5)[0] is None  # one voxel: a floater


def test_prepare_adds_the_splat_collider(scene_file: Path) -> None:
    scene = load_scene([scene_file], [], WriterOptions())
    prepared = prepare_scene(scene, SceneOptions(collision="convex-hull", collision_from_splat=True))
    names = [p.obj.name for p in prepared.objects]
    assert names == ["table", "bin", "cube", "splat_collision"]
    without = prepare_scene(replace(scene, splats=[]), SceneOptions(collision="convex-hull", collision_from_splat=True))
    assert "collision_from_splat: the scene has no splat" in without.notes
