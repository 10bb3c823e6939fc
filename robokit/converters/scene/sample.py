"""A deterministic sample scene: a table, an open bin on it, a cube above the bin, and a splat cloud over them.

The splat also covers a crate beside the table that has no mesh, so `--collision-from-splat` has something to
build. Meshes are written as OBJ, mesh PLY and STL to exercise each reader.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import trimesh
import yaml
from scipy.spatial.transform import Rotation

from robokit.converters.scene.model import SplatSet
from robokit.converters.scene.ply import SH_C0, write_splat_ply
from robokit.errors import RobokitError

TABLE_HEIGHT = 0.75
BIN_SIZE = (0.3, 0.2, 0.12)  # outer x, y, height (m)
BIN_WALL = 0.01
CUBE_SIZE = 0.05
CRATE = ((0.9, 0.7, 0.15), (0.4, 0.3, 0.3))  # centre, size: covered by splats only


def open_box(size_x: float, size_y: float, height: float, wall: float) -> trimesh.Trimesh:
    """A watertight open-top box (a bin) with its bottom centre at the origin."""
    ox, oy, ix, iy = size_x / 2, size_y / 2, size_x / 2 - wall, size_y / 2 - wall
    rings = [(ox, oy, 0.0), (ox, oy, height), (ix, iy, height), (ix, iy, wall)]
    v = np.array([(sx * x, sy * y, z) for x, y, z in rings for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
    quads = [(0, 3, 2, 1), (12, 13, 14, 15)]
    for i in range(4):
        j = (i + 1) % 4
        quads += [(r + i, r + j, r + 4 + j, r + 4 + i) for r in (0, 4, 8)]
    faces = np.array([tri for a, b, c, d in quads for tri in ((a, b, c), (a, c, d))])
    return trimesh.Trimesh(v, faces, process=True)


def table_mesh() -> trimesh.Trimesh:
    """A table top on four legs, standing on the origin, top surface at TABLE_HEIGHT."""
    top = trimesh.creation.box((1.0, 0.7, 0.04))
    top.apply_translation((0, 0, TABLE_HEIGHT - 0.02))
    legs = []
    for x in (-0.45, 0.45):
        for y in (-0.3, 0.3):
            leg = trimesh.creation.box((0.05, 0.05, TABLE_HEIGHT - 0.04))
            leg.apply_translation((x, y, (TABLE_HEIGHT - 0.04) / 2))
            legs.append(leg)
    table = trimesh.util.concatenate([top, *legs])
    assert isinstance(table, trimesh.Trimesh)
    return table


def sample_splats(density: float = 6000.0, seed: int = 0, degree: int = 1) -> SplatSet:
    """Gaussians on the table, bin, cube and crate (`density` per m²) and a floor patch, coloured per surface."""
    rng = np.random.default_rng(seed)
    bin_mesh = open_box(*BIN_SIZE, BIN_WALL).apply_translation((0, 0, TABLE_HEIGHT))
    cube = trimesh.creation.box((CUBE_SIZE,) * 3).apply_translation((0, 0, TABLE_HEIGHT + 0.2))
    crate = trimesh.creation.box(CRATE[1]).apply_translation(CRATE[0])
    floor = trimesh.creation.box((2.4, 2.4, 0.001))
    surfaces = [(table_mesh(), (0.55, 0.35, 0.2), 1.0), (bin_mesh, (0.2, 0.4, 0.8), 1.0),
                (cube, (0.8, 0.1, 0.1), 1.0), (crate, (0.6, 0.5, 0.3), 1.0), (floor, (0.5, 0.5, 0.5), 0.1)]
    points, colors = [], []
    for mesh, rgb, share in surfaces:
        count = int(mesh.area * density * share)
        points.append(trimesh.sample.sample_surface(mesh, count, seed=int(rng.integers(1 << 31)))[0])
        colors.append(np.clip(np.asarray(rgb) + rng.normal(0, 0.03, (count, 3)), 0, 1))
    rgb_all = np.concatenate(colors)
    n, k = len(rgb_all), (degree + 1) ** 2
    sh = rng.normal(0, 0.02, (n, k, 3))
    sh[:, 0, :] = (rgb_all - 0.5) / SH_C0
    return SplatSet(
        name="splat",
        positions=np.concatenate(points).astype(np.float32),
        orientations=Rotation.random(n, random_state=seed).as_quat().astype(np.float32),
        scales=np.exp(rng.normal(np.log(0.006), 0.3, (n, 3))).astype(np.float32),
        opacities=rng.uniform(0.6, 0.99, n).astype(np.float32),
        sh=sh.astype(np.float32),
        sh_degree=degree,
        source="sample",
    )


def write_sample_scene(out: Path, density: float = 6000.0, seed: int = 0) -> Path:
    """Write the sample scene into the new folder `out` (scene.yaml, splat.ply, meshes/) and return scene.yaml."""
    if out.exists() and any(out.iterdir()):
        raise RobokitError(f"{out}: not empty; the sample scene is written to a new folder")
    (out / "meshes").mkdir(parents=True, exist_ok=True)
    table_mesh().export(out / "meshes" / "table.obj")
    open_box(*BIN_SIZE, BIN_WALL).export(out / "meshes" / "bin.ply")
    trimesh.creation.box((CUBE_SIZE,) * 3).export(out / "meshes" / "cube.stl")
    write_splat_ply(out / "splat.ply", sample_splats(density, seed))
    description = {
        "name": "sample_tabletop",
        "convention": "rayform",
        "units": "m",
        "ground": {"height": 0.0},
        "splats": [{"name": "splat", "path": "splat.ply"}],
        "objects": [
            {"name": "table", "mesh": "meshes/table.obj", "collision": "convex-hull", "color": [0.55, 0.35, 0.2]},
            {"name": "bin", "mesh": "meshes/bin.ply", "pose": {"position": [0.0, 0.0, TABLE_HEIGHT]},
             "color": [0.2, 0.4, 0.8]},
            {"name": "cube", "mesh": "meshes/cube.stl", "dynamic": True, "mass": 0.1, "collision": "convex-hull",
             "pose": {"position": [0.0, 0.0, TABLE_HEIGHT + 0.2], "rpy_deg": [0, 0, 20]}, "color": [0.8, 0.1, 0.1]},
        ],
        "cameras": [{"name": "overview", "position": [1.6, -1.2, 1.5], "look_at": [0.0, 0.0, TABLE_HEIGHT],
                     "width": 640, "height": 480, "fov_deg": 55}],
        "lights": [{"name": "sun", "type": "distant", "direction": [0.3, 0.2, -1.0], "intensity": 1.0}],
    }
    path = out / "scene.yaml"
    path.write_text(yaml.safe_dump(description, sort_keys=False))
    return path
