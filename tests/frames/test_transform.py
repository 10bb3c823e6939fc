"""Pose and point conversion: the research doc's matrices, round trips, composition, camera view axes."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.transform import Rotation

from robokit.errors import FrameError
from robokit.frames import (
    CONVENTIONS,
    camera_change,
    convert_points,
    convert_pose_stream,
    convert_poses,
    world_change,
)
from robokit.timeline import PoseStream

NAMES = sorted(CONVENTIONS)
names = st.sampled_from(NAMES)
translations = arrays(np.float64, (4, 3), elements=st.floats(-100, 100))
quats = arrays(np.float64, (4, 4), elements=st.floats(-1, 1)).filter(
    lambda q: bool((np.linalg.norm(q, axis=1) > 0.1).all())
)
SETTINGS = settings(max_examples=150, deadline=None)

FLIP = np.diag([1.0, -1.0, -1.0])  # opencv ↔ opengl camera, 180° about X
FLU_TO_RDF = np.array([[0.0, -1, 0], [0, 0, -1], [1, 0, 0]])
GL_WORLD_TO_FLU = np.array([[0.0, 0, -1], [-1, 0, 0], [0, 1, 0]])


def same_rotation(q1: np.ndarray, q2: np.ndarray) -> None:
    np.testing.assert_allclose(Rotation.from_quat(q1).as_matrix(), Rotation.from_quat(q2).as_matrix(), atol=1e-9)


def test_research_doc_camera_matrices() -> None:
    for src, dst in [("opencv", "opengl"), ("opengl", "opencv"), ("ros", "isaac"), ("rayform", "mujoco")]:
        np.testing.assert_array_equal(camera_change(src, dst), FLIP)
    np.testing.assert_array_equal(Rotation.from_matrix(FLIP).as_quat(), [1, 0, 0, 0])
    np.testing.assert_array_equal(camera_change("isaac", "mujoco"), np.eye(3))


def test_research_doc_world_matrices() -> None:
    np.testing.assert_array_equal(world_change("rayform", "opencv"), FLU_TO_RDF)
    np.testing.assert_array_equal(world_change("opencv", "ros"), FLU_TO_RDF.T)
    np.testing.assert_array_equal(world_change("opencv", "ros"), [[0, 0, 1], [-1, 0, 0], [0, -1, 0]])
    np.testing.assert_allclose(Rotation.from_matrix(FLU_TO_RDF).as_quat(), [0.5, -0.5, 0.5, 0.5], atol=1e-15)
    np.testing.assert_array_equal(world_change("opengl", "rayform"), GL_WORLD_TO_FLU)
    np.testing.assert_array_equal(world_change("isaac", "ros"), np.eye(3))


def test_ros_optical_to_opengl_is_pure_camera_change() -> None:
    r = Rotation.from_euler("zyx", [0.4, -0.3, 1.0])
    t, q = convert_poses([1.0, 2, 3], r.as_quat(), "ros", "mujoco", camera=True)
    np.testing.assert_array_equal(t, [1, 2, 3])
    np.testing.assert_allclose(Rotation.from_quat(q).as_matrix(), r.as_matrix() @ FLIP, atol=1e-12)


@SETTINGS
@given(translations, quats, names, names, st.booleans())
def test_round_trip_is_identity(t: np.ndarray, q: np.ndarray, src: str, dst: str, camera: bool) -> None:
    t1, q1 = convert_poses(t, q, src, dst, camera=camera)
    t2, q2 = convert_poses(t1, q1, dst, src, camera=camera)
    np.testing.assert_allclose(t2, t, atol=1e-9)
    same_rotation(q2, q)


@SETTINGS
@given(translations, quats, names, names, names, st.booleans())
def test_composition(t: np.ndarray, q: np.ndarray, src: str, mid: str, dst: str, camera: bool) -> None:
    direct = convert_poses(t, q, src, dst, camera=camera)
    via = convert_poses(*convert_poses(t, q, src, mid, camera=camera), mid, dst, camera=camera)
    np.testing.assert_allclose(via[0], direct[0], atol=1e-9)
    same_rotation(via[1], direct[1])
    np.testing.assert_allclose(world_change(mid, dst) @ world_change(src, mid), world_change(src, dst))
    np.testing.assert_allclose(camera_change(src, mid) @ camera_change(mid, dst), camera_change(src, dst))


@SETTINGS
@given(translations, quats, names, names, st.booleans())
def test_quaternions_stay_unit_and_canonical(
    t: np.ndarray, q: np.ndarray, src: str, dst: str, camera: bool
) -> None:
    _, out = convert_poses(t, q, src, dst, camera=camera)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-12)
    assert (out[:, 3] >= 0).all()


@SETTINGS
@given(translations, quats, names, names)
def test_pose_formula_w_t_m(t: np.ndarray, q: np.ndarray, src: str, dst: str) -> None:
    w, m = world_change(src, dst), camera_change(src, dst)
    for camera, right in ((True, m), (False, np.eye(3))):
        t1, q1 = convert_poses(t, q, src, dst, camera=camera)
        np.testing.assert_allclose(t1, t @ w.T, atol=1e-9)
        expected = w @ Rotation.from_quat(q).as_matrix() @ right
        np.testing.assert_allclose(Rotation.from_quat(q1).as_matrix(), expected, atol=1e-9)
    np.testing.assert_allclose(convert_points(t, src, dst), t @ w.T, atol=1e-9)


@SETTINGS
@given(quats, st.sampled_from(["opengl", "mujoco", "isaac"]))
def test_view_direction_is_minus_z_in_gl_style_cameras(q: np.ndarray, dst: str) -> None:
    view = Rotation.from_quat(q).apply([0, 0, 1])  # rayform camera looks along its +Z
    _, q1 = convert_poses(np.zeros((4, 3)), q, "rayform", dst, camera=True)
    expected = view @ world_change("rayform", dst).T
    np.testing.assert_allclose(Rotation.from_quat(q1).apply([0, 0, -1]), expected, atol=1e-9)


@pytest.mark.parametrize("dst", ["opengl", "mujoco", "isaac"])
def test_forward_looking_camera(dst: str) -> None:
    looking_forward = np.array([[0.0, 0, 1], [-1, 0, 0], [0, -1, 0]])  # camera x right, y down, z = world +X
    _, q = convert_poses([0.0, 0, 0], Rotation.from_matrix(looking_forward).as_quat(), "rayform", dst, camera=True)
    forward = convert_points([1.0, 0, 0], "rayform", dst)
    np.testing.assert_allclose(Rotation.from_quat(q).apply([0, 0, -1]), forward, atol=1e-12)
    up = convert_points([0.0, 0, 1], "rayform", dst)
    np.testing.assert_allclose(Rotation.from_quat(q).apply([0, 1, 0]), up, atol=1e-12)


def test_points_follow_world_axes() -> None:
    np.testing.assert_allclose(convert_points([[1.0, 2, 3]], "rayform", "opengl"), [[-2, 3, -1]])
    np.testing.assert_allclose(convert_points([[1.0, 2, 3]], "rayform", "opencv"), [[-2, -3, 1]])
    np.testing.assert_allclose(convert_points([[1.0, 2, 3]], "ros", "mujoco"), [[1, 2, 3]])


def test_nan_rows_stay_nan_and_empty_input() -> None:
    t, q = convert_poses(np.zeros((2, 3)), np.array([[np.nan] * 4, [0, 0, 0, 1]]), "ros", "opencv", camera=True)
    assert np.isnan(q[0]).all()
    np.testing.assert_allclose(q[1], [0.5, -0.5, 0.5, 0.5])
    t, q = convert_poses(np.zeros((0, 3)), np.zeros((0, 4)), "ros", "opengl", camera=True)
    assert t.shape == (0, 3) and q.shape == (0, 4)


def test_convert_pose_stream_uses_stream_convention_and_camera_flag() -> None:
    r = Rotation.from_euler("z", [[0.0], [0.5]])
    base = PoseStream(
        "tf/cam", np.array([0, 10]), translation=np.eye(3)[:2], quaternion=r.as_quat(),
        parent_frame="world", child_frame="cam", convention="ros",
    )
    for is_camera in (False, True):
        stream = replace(base, is_camera=is_camera)
        out = convert_pose_stream(stream, "opengl")
        t, q = convert_poses(stream.translation, stream.quaternion, "ros", "opengl", camera=is_camera)
        assert out.convention == "opengl" and out.child_frame == "cam" and out.is_camera == is_camera
        np.testing.assert_array_equal(out.translation, t)
        np.testing.assert_array_equal(out.quaternion, q)
        np.testing.assert_array_equal(out.timestamps, stream.timestamps)
    assert base.convention == "ros"


def test_unknown_convention() -> None:
    with pytest.raises(FrameError, match=r"'blender'.*rayform, ros"):
        world_change("ros", "blender")
    with pytest.raises(FrameError):
        camera_change("unity", "ros")
    with pytest.raises(FrameError):
        convert_poses([0.0, 0, 0], [0.0, 0, 0, 1], "ros", "nope", camera=False)
    with pytest.raises(FrameError):
        convert_points([0.0, 0, 0], "nope", "ros")
