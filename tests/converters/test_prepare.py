from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robokit
from robokit.converters.options import WriterOptions
from robokit.converters.prepare import estimate_rate, prepare
from robokit.errors import ChannelError, ConversionError
from robokit.timeline import ArrayFrameSource, Episode, EpisodeMeta, ImageStream, NumericStream, PoseStream


def _episode(n_state: int = 101, n_cam: int = 31) -> Episode:
    t_state = np.arange(n_state, dtype=np.int64) * 10_000_000  # 100 Hz
    t_cam = np.arange(n_cam, dtype=np.int64) * 33_333_333  # 30 Hz
    frames = [np.full((8, 8, 3), i, dtype=np.uint8) for i in range(n_cam)]
    pose_q = np.tile([0.0, 0.0, 0.0, 1.0], (n_state, 1))
    return Episode(EpisodeMeta("mem://x", "x"), {
        "joints/position": NumericStream("joints/position", t_state, values=np.arange(n_state)[:, None] * 0.1,
                                         names=("j0",)),
        "front/rgb": ImageStream("front/rgb", t_cam, source=ArrayFrameSource(frames), width=8, height=8),
        "tf/tool0": PoseStream("tf/tool0", t_state, translation=np.zeros((n_state, 3)), quaternion=pose_q,
                               parent_frame="base_link", child_frame="tool0"),
    })


def test_estimate_rate_snaps_to_integer() -> None:
    s = NumericStream("a/b", np.arange(10, dtype=np.int64) * 33_333_333, values=np.zeros(10))
    assert estimate_rate(s) == 30.0


def test_prepare_defaults_to_slowest_camera_and_derives_action() -> None:
    p = prepare(_episode(), WriterOptions(action="joints/position_delta", image_size=(4, 4),
                                          poses=("tf/tool0",), frame="mujoco", task="pick"))
    assert p.fps == 30.0
    assert p.n_frames == len(p.state) == len(p.cameras["front/rgb"]) == len(p.poses["tf/tool0"])
    assert p.action is not None and np.allclose(p.action.values[:-1, 0], np.diff(p.state.values[:, 0]))
    assert p.cameras["front/rgb"].frame(0).array().shape == (4, 4, 3)
    assert p.poses["tf/tool0"].convention == "mujoco" and p.task == "pick"


def test_prepare_errors_name_what_exists() -> None:
    with pytest.raises(ChannelError, match="available: front/rgb"):
        prepare(_episode(), WriterOptions(cameras=("wrist",)))
    with pytest.raises(ChannelError, match="state channel"):
        prepare(_episode(), WriterOptions(state="arm/position"))
    with pytest.raises(ConversionError, match=r"episode x: .*need at least 2"):
        prepare(_episode(n_state=2, n_cam=1), WriterOptions(fps=5))


def test_prepare_on_sample_recording(sample_bag: Path) -> None:
    (ep,) = robokit.open(sample_bag)
    p = prepare(ep, WriterOptions(fps=15, action="joints/position_delta"))
    assert p.fps == 15 and 40 <= p.n_frames <= 46 and set(p.cameras) == {"front/rgb", "wrist/rgb"}
    assert p.task.startswith("pick up")


def _base(n: int = 50) -> Episode:
    """A wheeled base: odometry pose and twist at 50 Hz, a GNSS fix at 5 Hz, no joints."""
    from robokit.timeline import StreamOrigin

    t = np.arange(n, dtype=np.int64) * 20_000_000
    odom = StreamOrigin("/odom", "nav_msgs/msg/Odometry", "header")
    q = np.tile([0.0, 0.0, np.sin(0.25), np.cos(0.25)], (n, 1))
    twist = np.column_stack([np.full(n, 0.5), np.zeros((n, 4)), np.full(n, 0.1)])
    fix_t = t[::10]
    return Episode(EpisodeMeta("mem://base", "base"), {
        "odom/pose": PoseStream("odom/pose", t, translation=np.column_stack([t / 1e9, np.zeros(n), np.zeros(n)]),
                                quaternion=q, parent_frame="odom", child_frame="base_link", origin=odom),
        "odom/twist": NumericStream("odom/twist", t, values=twist, names=("linear.x", "linear.y", "linear.z",
                                                                          "angular.x", "angular.y", "angular.z"),
                                    origin=odom),
        "gps/fix": NumericStream("gps/fix", fix_t, values=np.zeros((len(fix_t), 3)),
                                 names=("latitude", "longitude", "altitude")),
    })


def test_pose_state_and_twist_action_are_flattened_with_names() -> None:
    p = prepare(_base(), WriterOptions(state="odom/pose", action="odom/twist", frame="ros"))  # wxyz by default
    assert p.fps == 50 and p.state.names == ("x", "y", "z", "qw", "qx", "qy", "qz")
    np.testing.assert_allclose(p.state.values[3], [0.06, 0, 0, np.cos(0.25), 0, 0, np.sin(0.25)])
    assert p.action is not None and p.action.names[0] == "linear.x" and p.action.values[0].tolist()[::5] == [0.5, 0.1]
    swapped = prepare(_base(), WriterOptions(state="odom/twist", action="odom/pose", frame="ros", quat_order="xyzw"))
    assert swapped.action is not None and swapped.action.names == ("x", "y", "z", "qx", "qy", "qz", "qw")


def test_default_state_without_joints_is_the_odometry_pose_and_announced() -> None:
    p = prepare(_base(), WriterOptions(action="joints/position_delta"))
    assert p.state.name == "odom/pose" and p.state.dim == 7
    assert p.action is not None and p.action.name == "odom/pose_delta"  # the default state's delta follows it
    assert "no joints/position channel: the state is odom/pose (odometry pose)" in p.notes
    assert "fps 50 by default: state odom/pose measured at 50 Hz" in p.notes
    ep = _base()
    only_fix = ep.with_streams({"gps/fix": ep.streams["gps/fix"]})
    with pytest.raises(ChannelError, match=r"no joints or odometry; pass --state\) 'joints/position' .*: gps/fix"):
        prepare(only_fix, WriterOptions())


def test_default_fps_is_the_mean_camera_rate() -> None:
    """A camera at 21.4 frames/s with intervals of 30, 30 and 80 ms: 21 fps, not 33 from the median interval."""
    intervals = np.tile([30_000_000, 30_000_000, 80_187_000], 20)
    t_cam = np.concatenate([[0], np.cumsum(intervals)]).astype(np.int64)
    ep = _episode(n_state=int(t_cam[-1] // 10_000_000) + 1, n_cam=len(t_cam))
    cam = ep.streams["front/rgb"]
    assert isinstance(cam, ImageStream)
    ep = ep.with_streams({**ep.streams, "front/rgb": ImageStream("front/rgb", t_cam, source=cam.source, width=8,
                                                                 height=8)})
    p = prepare(ep, WriterOptions())
    assert p.fps == 21 and "fps 21 by default: camera front/rgb measured at 21.4 Hz" in p.notes  # snapped within 2 %
