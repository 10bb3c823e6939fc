from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest
from rosbags.highlevel import AnyReader
from scipy.spatial.transform import Rotation

import robokit
from robokit.errors import OptionError, RobokitError
from robokit.ros.bagwriter import TOPIC_TYPES
from robokit.sim.arm import compile_model
from robokit.sim.ik import Kinematics
from robokit.sim.policy import TASK, home_pose, plan_episode
from robokit.sim.record import RecordedEpisode, RecordSpec, record
from robokit.sim.scene import JOINTS, scene_xml
from robokit.timeline import Episode, ImageStream, NumericStream, PoseStream


@pytest.fixture(scope="module")
def episode(recording: RecordedEpisode) -> Episode:
    (ep,) = robokit.open(recording.path)
    return ep


def _rate(stream: NumericStream | PoseStream | ImageStream) -> float:
    return (len(stream) - 1) / ((stream.timestamps[-1] - stream.timestamps[0]) / 1e9)


def test_bag_has_every_topic_with_its_type(recording: RecordedEpisode) -> None:
    with AnyReader([recording.path]) as reader:
        assert {c.topic: c.msgtype for c in reader.connections} == dict(TOPIC_TYPES)
        assert sorted(f.name for f in recording.path.iterdir()) == ["episode_000.mcap", "metadata.yaml", "scene.xml"]


def test_topics_read_back_with_expected_counts_and_rates(episode: Episode, spec: RecordSpec) -> None:
    seconds = spec.duration_s
    expected = {"joints/position": 100, "joints/velocity": 100, "joints/effort": 100,
                "joint_commands/position": 100, "tf/tool0": 50, "tf/cube": 50, "front/rgb": 30, "wrist/rgb": 15}
    for name, hz in expected.items():
        stream = episode[name]
        assert isinstance(stream, NumericStream | PoseStream | ImageStream)
        assert len(stream) == int(seconds * hz) + 1, name
        assert _rate(stream) == pytest.approx(hz, rel=1e-3), name
        assert stream.origin is not None and stream.origin.time_source == "header"
    for name in ("joints/position", "joints/velocity", "joints/effort", "joint_commands/position"):
        stream = episode[name]
        assert isinstance(stream, NumericStream) and stream.names == JOINTS and np.isfinite(stream.values).all()
    assert episode.tasks == (TASK,)
    assert {"tf/base_link", "tf/front_camera_optical", "tf/wrist_camera_optical"} <= set(episode.streams)


def test_cameras_raw_front_jpeg_wrist_with_intrinsics_from_fovy(episode: Episode, spec: RecordSpec) -> None:
    model = compile_model(scene_xml())
    front, wrist = episode["front/rgb"], episode["wrist/rgb"]
    assert isinstance(front, ImageStream) and isinstance(wrist, ImageStream)
    assert (front.format, front.encoding, wrist.format) == ("raw", "rgb8", "jpeg")
    for stream, cam in ((front, "front"), (wrist, "wrist")):
        fovy = float(model.cam_fovy[model.camera(cam).id])
        assert stream.camera is not None
        assert stream.camera.k[0, 0] == pytest.approx(0.5 * spec.height / np.tan(np.radians(fovy) / 2))
        assert stream.camera.k[0, 2] == pytest.approx((spec.width - 1) / 2)
        assert stream.frame(0).array().shape == (spec.height, spec.width, 3)


def _matrix(pose: PoseStream, i: int = 0) -> np.ndarray:
    return pose.matrices()[i]


def _red_near(pixels: np.ndarray, u: float, v: float) -> bool:
    """Whether a red pixel is within one pixel of (u, v) (column, row)."""
    col, row = round(u), round(v)
    patch = pixels[max(row - 1, 0):row + 2, max(col - 1, 0):col + 2].astype(int)
    r, g, b = patch[..., 0], patch[..., 1], patch[..., 2]
    return bool(((r > 100) & (r > 2 * g) & (r > 2 * b)).any())


def test_cube_projects_onto_red_pixels_through_tf_static_and_camera_info(episode: Episode) -> None:
    """Extrinsics (optical frames converted from MuJoCo's camera axes), K and images agree."""
    cube = episode["tf/cube"]
    tool = episode["tf/tool0"]
    assert isinstance(cube, PoseStream) and isinstance(tool, PoseStream)
    world_cube = np.r_[cube.translation[0], 1.0]
    front_optical, wrist_optical = episode["tf/front_camera_optical"], episode["tf/wrist_camera_optical"]
    assert isinstance(front_optical, PoseStream) and isinstance(wrist_optical, PoseStream)
    assert (front_optical.parent_frame, wrist_optical.parent_frame) == ("world", "tool0")
    cameras = {"front/rgb": _matrix(front_optical), "wrist/rgb": _matrix(tool) @ _matrix(wrist_optical)}
    for name, world_from_camera in cameras.items():
        stream = episode[name]
        assert isinstance(stream, ImageStream) and stream.camera is not None
        x, y, z = (np.linalg.inv(world_from_camera) @ world_cube)[:3]
        assert z > 0, f"{name}: the cube is behind the optical frame"
        k = stream.camera.k
        u, v = k[0, 0] * x / z + k[0, 2], k[1, 1] * y / z + k[1, 2]
        assert _red_near(stream.frame(0).array(), u, v), name


def test_scene_beside_the_bag_starts_the_cube_where_tf_says(recording: RecordedEpisode, episode: Episode) -> None:
    model = compile_model(recording.path / "scene.xml")
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    cube = episode["tf/cube"]
    assert isinstance(cube, PoseStream)
    assert np.allclose(data.body("cube").xpos, cube.translation[0], atol=1e-3)
    angle = (Rotation.from_quat(cube.quaternion[0]).inv() * Rotation.from_matrix(data.body("cube").xmat.reshape(3, 3)))
    assert angle.magnitude() < 1e-2
    assert recording.placed  # the scripted policy put the cube in the bin


def test_same_seed_same_recording_other_seed_other_cube(tmp_path: Path) -> None:
    spec = RecordSpec(duration_s=0.5, width=16, height=12, seed=7)
    (a,), (b,) = record(tmp_path / "a", 1, spec), record(tmp_path / "b", 1, spec)
    (ea,), (eb,) = robokit.open(a.path), robokit.open(b.path)
    for name in ("joints/position", "joint_commands/position", "joints/effort"):
        sa, sb = ea[name], eb[name]
        assert isinstance(sa, NumericStream) and isinstance(sb, NumericStream)
        assert np.array_equal(sa.values, sb.values) and np.array_equal(sa.timestamps, sb.timestamps)
    kin = Kinematics(compile_model(scene_xml()))
    cubes = {plan_episode(np.random.default_rng([s, 0]), 6.0, home_pose(kin)).cube for s in range(4)}
    assert len(cubes) == 4


def test_refuses_taken_episode_folders_and_bad_options_before_writing(tmp_path: Path) -> None:
    (tmp_path / "taken" / "episode_001").mkdir(parents=True)
    with pytest.raises(RobokitError, match="already exist"):
        record(tmp_path / "taken", 2, RecordSpec(duration_s=0.5, width=16, height=12))
    assert sorted(p.name for p in (tmp_path / "taken").iterdir()) == ["episode_001"]
    for spec, episodes in ((RecordSpec(width=0), 1), (RecordSpec(duration_s=0.1), 1), (RecordSpec(), 0)):
        with pytest.raises(OptionError):
            record(tmp_path / "bad", episodes, spec)
    assert not (tmp_path / "bad").exists()
