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
