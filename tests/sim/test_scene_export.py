from __future__ import annotations

import numpy as np

import robokit
from robokit.sim.arm import compile_model
from robokit.sim.ik import Kinematics, pointing_down
from robokit.sim.record import RecordedEpisode
from robokit.sim.scene import CUBE_HALF, HOME, scene_xml
from robokit.sim.scene_export import sim_scene
from robokit.timeline import ImageStream, PoseStream


def test_sim_scene_holds_the_environment_and_names_what_it_leaves_out() -> None:
    scene = sim_scene()
    objects = {o.name: o for o in scene.objects}
    assert set(objects) == {"table", "cube", *(f"bin_{i}" for i in range(5))}
    cube = objects["cube"]
    assert cube.dynamic and cube.mass == 0.05 and cube.visual is not None
    assert np.allclose(cube.visual.extents, 2 * CUBE_HALF)
    assert not objects["table"].dynamic and scene.ground is not None and scene.ground.height == 0.0
    assert dict(scene.skipped).keys() == {"base_link", "wrist"}
    assert [light.kind for light in scene.lights] == ["distant"]


def test_exported_front_camera_is_the_recorded_optical_frame(recording: RecordedEpisode) -> None:
    (camera,) = sim_scene(96, 72).cameras
    (episode,) = robokit.open(recording.path)
    recorded = episode["tf/front_camera_optical"]
    assert isinstance(recorded, PoseStream)
    assert np.allclose(camera.poses.translation, recorded.translation, atol=1e-6)
    assert np.allclose(abs(camera.poses.quaternion @ recorded.quaternion[0]), 1.0, atol=1e-6)
    front = episode["front/rgb"]
    assert isinstance(front, ImageStream) and front.camera is not None
    assert np.allclose(camera.intrinsics.k, front.camera.k)


def test_ik_reaches_a_tool_pose_over_the_table() -> None:
    kin = Kinematics(compile_model(scene_xml()))
    target, rotation = np.array([0.45, -0.12, 0.43]), pointing_down(0.3)
    q = kin.solve(target, rotation, HOME[:6], iterations=100)
    position, reached = kin.forward(q)
    assert np.linalg.norm(position - target) < 1e-4
    assert np.allclose(reached, rotation, atol=1e-3)
