"""Rendered by MuJoCo (EGL): a marker lands on the pixel the pinhole intrinsics and the scene pose predict."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh

from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.scene import Pose, Scene, SceneCamera, SceneObject
from robokit.converters.scene.description import look_at
from robokit.timeline import CameraInfo, PoseStream

pytestmark = pytest.mark.conformance


def test_render_matches_the_pinhole_projection(tmp_path: Path) -> None:
    import mujoco

    marker = np.array([0.3, -0.2, 0.4])
    w, h = 320, 240
    k = np.array([[260.0, 0, 140.0], [0, 280.0, 130.0], [0, 0, 1]])
    pose = look_at("cam", np.array([1.5, 0.6, 1.0]), np.array([0.1, 0.0, 0.5]), "rayform")
    stream = PoseStream("cam/pose", np.zeros(1, np.int64), pose.translation[None], pose.quaternion[None],
                        convention="rayform", static=True, is_camera=True)
    scene = Scene(ground=None, objects=[SceneObject("marker", trimesh.creation.icosphere(2, 0.01), Pose(marker),
                                                    color=(1.0, 0.0, 0.0))],
                  cameras=[SceneCamera("cam", CameraInfo(w, h, k), stream)])
    get_converter("mjcf").write_scene(scene, tmp_path, WriterOptions(extra={"collision": "convex-hull"}))
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "mjcf" / "scene.xml"))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    with mujoco.Renderer(model, h, w) as renderer:
        renderer.update_scene(data, camera="cam")
        image = renderer.render()
    red = (image[..., 0] > 120) & (image[..., 1] < 60) & (image[..., 2] < 60)
    ys, xs = np.nonzero(red)
    assert len(xs) > 3
    cam = np.linalg.inv(pose.matrix()) @ np.array([*marker, 1.0])
    expected = (k @ (cam[:3] / cam[2]))[:2]
    assert [xs.mean(), ys.mean()] == pytest.approx(expected, abs=1.0)
