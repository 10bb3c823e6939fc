"""The conventions table: six proper-rotation entries whose axes match their documented names."""

import numpy as np
import pytest

from robokit.errors import FrameError
from robokit.frames import CONVENTIONS, conventions

FLU = {"forward": [1, 0, 0], "left": [0, 1, 0], "up": [0, 0, 1]}
RDF = {"right": [1, 0, 0], "down": [0, 1, 0], "forward": [0, 0, 1]}


def test_table_lists_the_six_conventions() -> None:
    assert set(CONVENTIONS) == {"rayform", "ros", "opencv", "opengl", "isaac", "mujoco"}
    assert all(c.name == name and c.description for name, c in CONVENTIONS.items())


@pytest.mark.parametrize("name", sorted(CONVENTIONS))
def test_bases_are_proper_rotations(name: str) -> None:
    for basis in (CONVENTIONS[name].world, CONVENTIONS[name].camera):
        np.testing.assert_array_equal(basis @ basis.T, np.eye(3))
        assert np.linalg.det(basis) == pytest.approx(1.0)
        assert not basis.flags.writeable


@pytest.mark.parametrize("name", ["rayform", "ros", "isaac", "mujoco"])
def test_z_up_worlds_are_flu(name: str) -> None:
    np.testing.assert_array_equal(CONVENTIONS[name].world, np.eye(3))


def test_opencv_world_is_right_down_forward() -> None:
    world = CONVENTIONS["opencv"].world
    np.testing.assert_array_equal(world[:, 0], -np.array(FLU["left"]))
    np.testing.assert_array_equal(world[:, 1], -np.array(FLU["up"]))
    np.testing.assert_array_equal(world[:, 2], FLU["forward"])


def test_opengl_world_is_right_up_back() -> None:
    world = CONVENTIONS["opengl"].world
    np.testing.assert_array_equal(world[:, 0], -np.array(FLU["left"]))
    np.testing.assert_array_equal(world[:, 1], FLU["up"])
    np.testing.assert_array_equal(world[:, 2], -np.array(FLU["forward"]))


@pytest.mark.parametrize("name", ["rayform", "ros", "opencv"])
def test_optical_cameras(name: str) -> None:
    np.testing.assert_array_equal(CONVENTIONS[name].camera, np.eye(3))


@pytest.mark.parametrize("name", ["opengl", "isaac", "mujoco"])
def test_minus_z_cameras_have_y_up(name: str) -> None:
    camera = CONVENTIONS[name].camera
    np.testing.assert_array_equal(camera, np.diag([1.0, -1.0, -1.0]))
    np.testing.assert_array_equal(-camera[:, 2], RDF["forward"])
    np.testing.assert_array_equal(camera[:, 1], -np.array(RDF["down"]))


def test_docstring_table_names_every_convention() -> None:
    doc = conventions.__doc__ or ""
    assert all(f"| `{name}`" in doc for name in CONVENTIONS)
    assert "Y-up → Z-up" in doc


def test_unknown_name_lists_valid_ones() -> None:
    with pytest.raises(FrameError, match=r"'blender'.*rayform, ros, opencv, opengl, isaac, mujoco"):
        conventions.lookup("blender")
