"""Reading written MCAPs back with robokit's readers gives the written timeline; MCAP → LeRobot works."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robokit
from robokit.converters import get_converter
from robokit.converters.mcap.plan import align
from robokit.converters.options import WriterOptions
from robokit.timeline import EventStream, ImageStream, NumericStream, PoseStream
from robokit.timeline.images import ArrayFrameSource

from .conftest import OPTIONS, episode, pose, ticks, write


def test_sample_reads_back_as_the_aligned_timeline(sample_dir: Path, sample_mcap: Path) -> None:
    for source, written in zip(sorted(sample_dir.iterdir()), sorted(sample_mcap.iterdir()), strict=True):
        aligned, _, _ = align(robokit.open(source)[0], WriterOptions(**OPTIONS))  # type: ignore[arg-type]
        back = robokit.open(written)[0]
        assert sorted(back.streams) == sorted(aligned.streams)
        for name, want in aligned.streams.items():
            got = back.streams[name]
            assert (got.kind, len(got)) == (want.kind, len(want)), name
            assert np.array_equal(got.timestamps, want.timestamps), name
            if isinstance(want, NumericStream):
                assert isinstance(got, NumericStream) and got.names == want.names
                assert np.array_equal(got.values, want.values), name
            elif isinstance(want, PoseStream):
                assert isinstance(got, PoseStream) and (got.parent_frame, got.child_frame, got.static) == (
                    want.parent_frame, want.child_frame, want.static)
                assert np.allclose(got.translation, want.translation) and np.allclose(
                    np.abs(np.sum(got.quaternion * want.quaternion, axis=1)), 1)
            elif isinstance(want, EventStream):
                assert got.values == want.values  # type: ignore[attr-defined]
        wrist, front = back.streams["wrist/rgb"], back.streams["front/rgb"]
        assert isinstance(wrist, ImageStream) and isinstance(front, ImageStream)
        want_wrist, want_front = aligned.streams["wrist/rgb"], aligned.streams["front/rgb"]
        assert isinstance(want_wrist, ImageStream) and isinstance(want_front, ImageStream)
        assert [f.data for f in wrist.frames()] == [f.data for f in want_wrist.frames()]  # JPEG passed through
        assert front.camera is not None and want_front.camera is not None
        assert np.allclose(front.camera.k, want_front.camera.k) and front.frame_id == want_front.frame_id
        a, b = next(iter(front.frames())).array(), next(iter(want_front.frames())).array()
        assert a.shape == b.shape and np.abs(a.astype(int) - b).mean() < 3  # JPEG-encoded once


@pytest.mark.parametrize("encoding", ["protobuf", "ros2"])
def test_channel_names_restored(tmp_path: Path, encoding: str) -> None:
    """Streams whose names a topic cannot express come back under their own names."""
    n = 5
    streams = [
        NumericStream("imu/angular_velocity", ticks(n), np.ones((n, 3)), ("x", "y", "z"), "rad/s"),
        NumericStream("joints/velocity", ticks(n, hz=20), np.zeros((n, 2)), ("a", "b"), "rad/s"),
        NumericStream("battery", ticks(n), np.arange(n), ("v",), "V"),
        pose("ee/pose", "base", "ee"),
        EventStream("notes/events", ticks(2), ("a", "b")),
        EventStream("task", ticks(1), ("pick",)),
        EventStream("ui/click", ticks(1), ("ok",)),
    ]
    out = write([episode(streams)], tmp_path, mcap_encoding=encoding)
    back = robokit.open(out / "ep.mcap")[0]
    want = episode(streams)
    assert {k: len(s) for k, s in back.streams.items()} == {k: len(s) for k, s in want.streams.items()}
    assert np.array_equal(back["battery"].values, want["battery"].values)  # type: ignore[attr-defined]
    assert back.skipped and all("derived" in s.reason or "no mapping" in s.reason for s in back.skipped)


def test_mcap_to_lerobot(sample_mcap: Path, tmp_path: Path) -> None:
    episodes = robokit.open(sorted(sample_mcap.iterdir()))
    lerobot = get_converter("lerobot")
    result = lerobot.write(episodes, tmp_path, WriterOptions(fps=15, action="joints/position_delta",
                                                             extra={"codec": "h264"}))
    assert result.episodes == 2 and result.frames == sum(len(e["joints/position"]) for e in episodes)
    assert lerobot.check(tmp_path / "lerobot") == []


@pytest.mark.conformance
def test_mcap_to_lerobot_loads_in_lerobot(sample_mcap: Path, tmp_path: Path) -> None:
    pytest.importorskip("lerobot")
    episodes = robokit.open(sorted(sample_mcap.iterdir()))
    get_converter("lerobot").write(episodes, tmp_path, WriterOptions(fps=15, extra={"codec": "h264"}))
    assert get_converter("lerobot").check(tmp_path / "lerobot") == []


@pytest.mark.parametrize("encoding", ["protobuf", "ros2"])
def test_depth_frames_lossless(tmp_path: Path, encoding: str) -> None:
    """Depth is written as raw 16UC1 millimetres (float metres rounded to the millimetre): read back exactly."""
    rng = np.random.default_rng(1)
    mm = [rng.integers(0, 5000, (6, 8), dtype=np.uint16) for _ in range(3)]
    metres = [rng.random((6, 8), dtype=np.float32) for _ in range(3)]
    streams = [ImageStream(name, ticks(3), source=ArrayFrameSource(frames), width=8, height=6, encoding=enc,
                           frame_id=f"{name.split('/')[0]}_optical")
               for name, frames, enc in (("wrist/depth", mm, "16UC1"), ("sim/depth", metres, "32FC1"))]
    out = write([episode(streams)], tmp_path, mcap_encoding=encoding)
    assert get_converter("mcap").check(out) == []
    back = robokit.open(out / "ep.mcap")[0]
    for name, frames in (("wrist/depth", mm), ("sim/depth", [np.rint(m * 1000).astype(np.uint16) for m in metres])):
        got = back.streams[name]
        assert isinstance(got, ImageStream) and got.is_depth and got.encoding == "16UC1"
        for a, b in zip(got.frames(), frames, strict=True):
            assert a.array().dtype == b.dtype and np.array_equal(a.array(), b)


def test_topic_names_valid_for_ros2(tmp_path: Path) -> None:
    streams = [NumericStream("arm-left/torque sensor", ticks(5), np.ones((5, 1)), ("t",), "N·m")]
    out = write([episode(streams)], tmp_path, mcap_encoding="ros2")
    assert get_converter("mcap").check(out) == []
    back = robokit.open(out / "ep.mcap")[0]
    assert "arm-left/torque sensor" in back.streams
