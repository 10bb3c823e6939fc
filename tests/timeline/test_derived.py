"""Derived channels `<channel>_delta` and `<channel>_velocity`, directly and through Episode.__getitem__."""

import numpy as np
import pytest

from robokit.errors import ChannelError
from robokit.timeline import Episode, EpisodeMeta, ImageStream, NumericStream, PoseStream, StreamOrigin
from robokit.timeline.derived import derive

S = 1_000_000_000
T0 = 1_700_000_000 * S
TS = T0 + np.array([0, S // 2, S, 2 * S])
ORIGIN = StreamOrigin("/joint_states", "sensor_msgs/msg/JointState")


def make_episode() -> Episode:
    joints = NumericStream(
        "joints/position", TS, np.array([[0.0, 1], [1, 1], [2, 3], [4, 3]]), ("j1", "j2"), "rad", origin=ORIGIN
    )
    pose = PoseStream(
        "ee/pose", TS, translation=np.outer([0.0, 0.5, 1, 2], [1, 0, -2]), quaternion=np.tile([0, 0, 0, 1.0], (4, 1))
    )
    image = ImageStream("front/rgb", TS)
    return Episode(EpisodeMeta("mem://", "ep"), {s.name: s for s in (joints, pose, image)})


def test_delta_is_next_minus_current_and_zero_at_the_end() -> None:
    delta = make_episode()["joints/position_delta"]
    assert isinstance(delta, NumericStream)
    np.testing.assert_array_equal(delta.values, [[1, 0], [1, 2], [2, 0], [0, 0]])
    assert (delta.name, delta.names, delta.unit, delta.origin) == ("joints/position_delta", ("j1", "j2"), "rad", ORIGIN)
    np.testing.assert_array_equal(delta.timestamps, TS)


def test_velocity_is_the_gradient_over_seconds() -> None:
    vel = make_episode()["joints/position_velocity"]
    assert isinstance(vel, NumericStream)
    np.testing.assert_allclose(vel.values[:, 0], np.gradient([0.0, 1, 2, 4], [0, 0.5, 1, 2]))
    np.testing.assert_allclose(vel.values[0], [2, 0])
    assert vel.unit == "rad/s" and vel.names == ("j1", "j2")


def test_pose_translation_velocity_and_delta() -> None:
    ep = make_episode()
    vel = ep["ee/pose_velocity"]
    assert isinstance(vel, NumericStream)
    np.testing.assert_allclose(vel.values, np.tile([1.0, 0, -2], (4, 1)))
    assert (vel.names, vel.unit) == (("x", "y", "z"), "m/s")
    delta = ep["ee/pose_delta"]
    assert isinstance(delta, NumericStream) and delta.unit == "m"
    np.testing.assert_allclose(delta.values[0], [0.5, 0, -1])


def test_suffixes_chain() -> None:
    acc = make_episode()["ee/pose_velocity_velocity"]
    assert isinstance(acc, NumericStream)
    np.testing.assert_allclose(acc.values, 0, atol=1e-12)
    assert acc.unit == "m/s/s"


def test_single_sample_and_unitless() -> None:
    ep = Episode(EpisodeMeta("mem://", "ep"), {"g": NumericStream("g", TS[:1], np.array([[5.0]]))})
    vel, delta = ep["g_velocity"], ep["g_delta"]
    assert isinstance(vel, NumericStream) and isinstance(delta, NumericStream)
    np.testing.assert_array_equal(vel.values, [[0]])
    np.testing.assert_array_equal(delta.values, [[0]])
    assert vel.unit == "1/s" and delta.unit == ""


def test_missing_or_unsupported_base() -> None:
    ep = make_episode()
    assert derive(ep, "nope_delta") is None
    assert derive(ep, "joints/position") is None
    assert derive(ep, "front/rgb_velocity") is None
    with pytest.raises(ChannelError, match="'nope_velocity' not found"):
        ep["nope_velocity"]
