from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import mujoco
import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

from robokit.converters import WriteResult, get_converter
from robokit.converters.mjcf.check import captured_warnings
from robokit.converters.options import WriterOptions
from robokit.converters.scene import Pose, Scene, SceneObject, load_scene
from robokit.converters.scene.sample import BIN_SIZE, BIN_WALL, CUBE_SIZE, TABLE_HEIGHT, open_box
from robokit.errors import ConversionError


def _compile(mjcf_dir: Path) -> tuple[mujoco.MjModel, mujoco.MjData, list[str]]:
    with captured_warnings() as warnings:
        model = mujoco.MjModel.from_xml_path(str(mjcf_dir / "scene.xml"))
        data = mujoco.MjData(model)
    return model, data, warnings


def _settle(model: mujoco.MjModel, data: mujoco.MjData, seconds: float) -> None:
    while data.time < seconds:
        mujoco.mj_step(model, data)


def _body_z(model: mujoco.MjModel, data: mujoco.MjData, name: str) -> float:
    return float(data.xpos[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name)][2])


def test_compiles_without_warnings_and_check_passes(mjcf_written: tuple[Path, WriteResult]) -> None:
    mjcf_dir, result = mjcf_written
    model, _, warnings = _compile(mjcf_dir)
    assert warnings == []
    assert get_converter("mjcf").check(mjcf_dir) == []
    assert "scene.xml" in result.files and "trajectories/wrist.csv" in result.files
    assert all((mjcf_dir / f).is_file() for f in result.files)
    visual = [g for g in range(model.ngeom) if model.geom_group[g] == 2]
    assert visual and all(model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 0 for g in visual)


def test_two_seconds_keep_dynamic_objects_finite_and_above_the_floor(mjcf_written: tuple[Path, WriteResult]
                                                                     ) -> None:
    model, data, _ = _compile(mjcf_written[0])
    _settle(model, data, 2.0)
    assert np.isfinite(data.qpos).all() and np.isfinite(data.qvel).all()
    assert not data.warning.number.any()
    free = [model.jnt_bodyid[j] for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
    assert [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in free] == ["cube"]
    z = _body_z(model, data, "cube")
    assert TABLE_HEIGHT < z < TABLE_HEIGHT + BIN_SIZE[2]  # fell into the bin on the table and rests there
    assert np.linalg.norm(data.qvel[:3]) < 0.05


def _drop_scene(bin_mode: str) -> Scene:
    return Scene(objects=[
        SceneObject("bin", open_box(*BIN_SIZE, BIN_WALL), collision=bin_mode),
        SceneObject("cube", trimesh.creation.box((CUBE_SIZE,) * 3), Pose(np.array([0.0, 0.0, 0.3])),
                    dynamic=True, mass=0.1, collision="convex-hull")])


@pytest.mark.parametrize(("mode", "inside"), [("convex-decomposition", True), ("convex-hull", False)])
def test_cube_dropped_into_a_concave_bin(tmp_path: Path, mode: str, inside: bool) -> None:
    get_converter("mjcf").write_scene(_drop_scene(mode), tmp_path, WriterOptions())
    model, data, warnings = _compile(tmp_path / "mjcf")
    _settle(model, data, 2.0)
    z = _body_z(model, data, "cube")
    if inside:
        assert z == pytest.approx(BIN_WALL + CUBE_SIZE / 2, abs=0.01)  # on the bin's floor
    else:
        assert z == pytest.approx(BIN_SIZE[2] + CUBE_SIZE / 2, abs=0.01)  # on the lid of the single hull
    assert warnings == [] and not data.warning.number.any()


def test_cube_dropped_into_an_open_surface_tray(tmp_path: Path) -> None:
    """A single-sided tray (not watertight, no wall thickness) still keeps the cube inside."""
    box = trimesh.creation.box(BIN_SIZE).apply_translation((0, 0, BIN_SIZE[2] / 2))
    tray = trimesh.Trimesh(box.vertices, box.faces[box.face_normals[:, 2] < 0.5])
    scene = _drop_scene("convex-decomposition")
    scene.objects[0] = SceneObject("tray", tray)
    result = get_converter("mjcf").write_scene(scene, tmp_path, WriterOptions())
    assert any("tray: mesh is not watertight" in w for w in result.warnings)
    model, data, warnings = _compile(tmp_path / "mjcf")
    _settle(model, data, 2.0)
    assert _body_z(model, data, "cube") < CUBE_SIZE + 0.01 and warnings == []


def test_splats_are_noted_and_the_splat_collider_written(mjcf_written: tuple[Path, WriteResult]) -> None:
    mjcf_dir, result = mjcf_written
    assert any("not representable in MJCF" in w for w in result.warnings)
    xml = (mjcf_dir / "scene.xml").read_text()
    assert "<!-- Gaussian splat 'splat'" in xml and "not representable in MJCF" in xml
    model, _, _ = _compile(mjcf_dir)
    body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "splat_collision")
    geoms = [g for g in range(model.ngeom) if model.geom_bodyid[g] == body]
    assert geoms and all(model.geom_contype[g] for g in geoms)


def test_cameras_look_where_the_scene_says(mjcf_written: tuple[Path, WriteResult], sample_scene: Scene) -> None:
    model, data, _ = _compile(mjcf_written[0])
    mujoco.mj_forward(model, data)
    for camera in sample_scene.cameras:
        cam = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, camera.name)
        opencv = Rotation.from_quat(camera.poses.quaternion[0]).as_matrix()  # rayform: OpenCV camera axes
        xmat = data.cam_xmat[cam].reshape(3, 3)
        assert -xmat[:, 2] == pytest.approx(opencv[:, 2], abs=1e-6)  # looks along −Z = OpenCV +Z
        assert xmat[:, 1] == pytest.approx(-opencv[:, 1], abs=1e-6)  # +Y up = OpenCV −Y
        assert data.cam_xpos[cam] == pytest.approx(camera.poses.translation[0], abs=1e-6)
        fy, h = camera.intrinsics.k[1, 1], camera.intrinsics.height
        assert model.cam_fovy[cam] == pytest.approx(np.degrees(2 * np.arctan(h / 2 / fy)), abs=1e-3)
    rows = np.loadtxt(mjcf_written[0] / "trajectories" / "wrist.csv", delimiter=",", skiprows=1)
    wrist = next(c for c in sample_scene.cameras if c.name == "wrist")
    assert len(rows) == len(wrist.poses) and rows[0, 0] == 0 and np.all(np.diff(rows[:, 0]) > 0)


def test_flat_and_open_meshes_compile(tmp_path: Path) -> None:
    sheet = trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], [[0, 1, 2], [0, 2, 3]])
    scene = Scene(objects=[SceneObject("sheet", sheet, Pose(np.array([0.0, 0.0, 0.5])), collision="convex-hull")])
    get_converter("mjcf").write_scene(scene, tmp_path, WriterOptions())
    _, _, warnings = _compile(tmp_path / "mjcf")
    assert warnings == [] and get_converter("mjcf").check(tmp_path / "mjcf") == []


def test_refuses_recordings_and_checks_broken_models(tmp_path: Path) -> None:
    with pytest.raises(ConversionError, match="mjcf writes simulator scenes"):
        get_converter("mjcf").write([], tmp_path, WriterOptions())
    (tmp_path / "mjcf").mkdir()
    assert "no scene.xml" in get_converter("mjcf").check(tmp_path / "mjcf")[0]
    (tmp_path / "mjcf" / "scene.xml").write_text("<mujoco><worldbody><geom type='mesh' mesh='x'/></worldbody></mujoco>")
    assert "could not compile" in get_converter("mjcf").check(tmp_path / "mjcf")[0]


def test_bare_mesh_scene_defaults(tmp_path: Path) -> None:
    mesh = tmp_path / "crate.obj"
    trimesh.creation.box((0.4, 0.3, 0.3)).apply_translation((0, 0, 0.15)).export(mesh)
    options = WriterOptions(frame="opencv", extra={"collision": "mesh"})
    result = get_converter("mjcf").write_scene(load_scene([mesh], [], options), tmp_path, options)
    assert any("frame 'opencv' ignored" in w for w in result.warnings)
    assert get_converter("mjcf").check(tmp_path / "mjcf") == []


def test_a_y_up_scene_is_turned_z_up(tmp_path: Path) -> None:
    """Poses given in the opengl convention (Y up, −Z forward) land Z-up; vertices stay in the object frame."""
    cube = SceneObject("cube", trimesh.creation.box((0.1, 0.2, 0.3)), Pose(np.array([0.0, 1.0, -2.0])))
    scene = Scene(objects=[cube], ground=None)
    scene.meta = replace(scene.meta, convention="opengl")
    get_converter("mjcf").write_scene(scene, tmp_path, WriterOptions(extra={"collision": "convex-hull"}))
    model, data, _ = _compile(tmp_path / "mjcf")
    mujoco.mj_forward(model, data)
    body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "cube")
    assert data.xpos[body] == pytest.approx([2.0, 0.0, 1.0])  # 2 m forward, 1 m up
    assert Rotation.from_matrix(data.xmat[body].reshape(3, 3)).as_rotvec() == pytest.approx(
        Rotation.from_matrix([[0, 0, -1], [-1, 0, 0], [0, 1, 0]]).as_rotvec())
