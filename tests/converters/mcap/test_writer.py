"""MCAP writer on the sample recordings: structure, topics, one clock, counts, images, metadata, options."""

from __future__ import annotations

import tracemalloc
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import make_reader
from rosbags.highlevel import AnyReader

import robokit
from robokit.converters import get_converter
from robokit.converters.mcap import images
from robokit.converters.mcap.plan import align
from robokit.converters.options import WriterOptions
from robokit.errors import ChannelError, ConversionError, OptionError
from robokit.ros.fields import frame_id, header_stamp, time_ns
from robokit.timeline import EventStream, Frame, ImageStream
from robokit.timeline.images import ArrayFrameSource, encode_image

from .conftest import OPTIONS, camera, episode, messages, pose, summary, ticks, write

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_one_finished_indexed_file_per_episode(sample_mcap: Path) -> None:
    files = sorted(p.name for p in sample_mcap.iterdir())
    assert files == ["episode_000.mcap", "episode_001.mcap"]
    for name in files:
        data = (sample_mcap / name).read_bytes()
        assert data[:8] == data[-8:] == b"\x89MCAP0\r\n"
        s = summary(sample_mcap / name)
        assert s.statistics.message_count > 0 and s.chunk_indexes and s.statistics.channel_message_counts
        assert {c.compression for c in s.chunk_indexes} == {"zstd"}
        names = [x.name for x in s.schemas.values()]
        topics = [c.topic for c in s.channels.values()]
        assert len(names) == len(set(names)) and len(topics) == len(set(topics))  # each registered once


def test_check_passes(sample_mcap: Path) -> None:
    assert get_converter("mcap").check(sample_mcap) == []


def test_topics_and_profile(sample_mcap: Path, encoding: str) -> None:
    path = sample_mcap / "episode_000.mcap"
    with path.open("rb") as f:
        r = make_reader(f)
        header, s = r.get_header(), r.get_summary()
    assert header.profile == ("ros2" if encoding == "ros2" else "")
    assert {c.message_encoding for c in s.channels.values()} == {"cdr" if encoding == "ros2" else "protobuf"}
    topics = {c.topic: s.schemas[c.schema_id].name for c in s.channels.values()}
    expected = {"/tf", "/tf_static", "/joint_states", "/joint_commands", "/camera/front/image",
                "/camera/front/calibration", "/camera/wrist/image", "/camera/wrist/calibration", "/task",
                "/derived/joint_velocity", "/derived/action", "/derived/ee_path", "/episode/events", "/robokit/log"}
    assert set(topics) == expected
    if encoding == "protobuf":
        assert topics["/tf"] == "foxglove.FrameTransforms" and topics["/joint_states"] == "foxglove.JointStates"
        assert topics["/camera/front/image"] == "foxglove.CompressedImage"
        assert topics["/derived/ee_path"] == "foxglove.PosesInFrame" and topics["/episode/events"] == "foxglove.Event"
    else:
        assert topics["/tf"] == "tf2_msgs/msg/TFMessage" and topics["/joint_states"] == "sensor_msgs/msg/JointState"
        assert topics["/camera/front/calibration"] == "sensor_msgs/msg/CameraInfo"


def test_counts_equal_the_aligned_timeline(sample_dir: Path, sample_mcap: Path) -> None:
    ep = robokit.open(sample_dir / "episode_000")[0]
    aligned, frames, _ = align(ep, WriterOptions(**OPTIONS))  # type: ignore[arg-type]
    counts = Counter[str]()
    s = summary(sample_mcap / "episode_000.mcap")
    for cid, n in s.statistics.channel_message_counts.items():
        counts[s.channels[cid].topic] = n
    st = aligned.streams
    assert counts["/joint_states"] == len(st["joints/position"]) == frames
    assert counts["/camera/front/image"] == counts["/camera/front/calibration"] == len(st["front/rgb"]) == frames
    assert counts["/camera/wrist/image"] == len(st["wrist/rgb"]) == frames
    assert counts["/tf"] == len(st["tf/tool0"]) and counts["/tf_static"] == 1
    assert counts["/task"] == len(st["task"]) and counts["/derived/action"] == frames


def test_one_clock(sample_mcap: Path) -> None:
    """log time = publish time = message stamp, on the resampled grid."""
    path = sample_mcap / "episode_000.mcap"
    with path.open("rb") as f:
        for _, _, m in make_reader(f).iter_messages(log_time_order=False):
            assert m.publish_time == m.log_time
    images = messages(path, "/camera/front/image")
    assert all(header_stamp(msg) == t for t, msg in images)
    times = np.array([t for t, _ in images])
    assert np.allclose(np.diff(times), 1e9 / 15, atol=1)


def test_file_in_log_time_order(sample_mcap: Path) -> None:
    with (sample_mcap / "episode_000.mcap").open("rb") as f:
        times = [m.log_time for _, _, m in make_reader(f).iter_messages(log_time_order=False)]
    assert times == sorted(times)


def test_calibration_in_image_frame(sample_mcap: Path) -> None:
    path = sample_mcap / "episode_000.mcap"
    for cam in ("front", "wrist"):
        (_, image), (_, calib) = (messages(path, f"/camera/{cam}/{t}")[0] for t in ("image", "calibration"))
        frame = frame_id(image)
        assert frame == f"{cam}_camera_optical"
        assert frame_id(calib) == frame
        k = list(getattr(calib, "K", None) or calib.k)
        assert len(k) == 9 and k[0] > 0


def test_jpeg_passed_through(tmp_path: Path, sample_bag: Path) -> None:
    """Without fps every recorded JPEG is written byte for byte."""
    ep = robokit.open(sample_bag)[0]
    out = write([ep], tmp_path, cameras=["wrist"])
    wrist = ep.streams["wrist/rgb"]
    assert isinstance(wrist, ImageStream)
    written = [bytes(m.data) for _, m in messages(out / "episode_000.mcap", "/camera/wrist/image")]
    assert written == [f.data for f in wrist.frames()]
    assert [t for t, _ in messages(out / "episode_000.mcap", "/camera/wrist/image")] == wrist.timestamps.tolist()


def test_raw_frames_encoded_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame repeated by resampling is encoded once; PNG keeps the pixels exactly."""
    calls = Counter[int]()

    def counting(pixels: np.ndarray, fmt: str = "png", quality: int = 95) -> bytes:
        calls[int(pixels[0, 0, 0])] += 1
        return encode_image(pixels, fmt, quality)

    monkeypatch.setattr(images, "encode_image", counting)
    frames = [np.full((8, 8, 3), i, np.uint8) for i in range(3)]
    cam = ImageStream("top/rgb", ticks(3, hz=5), source=ArrayFrameSource(frames), width=8, height=8,
                      frame_id="top_optical")
    out = write([episode([cam, pose("tf/top_optical", "world", "top_optical", n=13)])], tmp_path, fps=10,
                mcap_image_format="png")
    assert sorted(calls.values()) == [1, 1, 1]
    got = messages(out / "ep.mcap", "/camera/top/image")
    assert len(got) == 5
    assert [int(Frame("png", data=bytes(m.data)).array()[0, 0, 0]) for _, m in got] == [0, 0, 1, 1, 2]


def test_metadata_and_urdf_attachment(tmp_path: Path) -> None:
    urdf = '<?xml version="1.0"?><robot name="arm"><link name="base_link"/></robot>'
    desc = EventStream("robot_description/events", ticks(1), (urdf,))
    out = write([episode([desc, pose("tf/tool0", "base_link", "tool0")])], tmp_path, task="pick")
    with (out / "ep.mcap").open("rb") as f:
        r = make_reader(f)
        meta = {m.name: m.metadata for m in r.iter_metadata()}
        attachments = list(r.iter_attachments())
    record = meta["robokit.episode"]
    assert record["source"] == "test://ep" and record["episode_id"] == "ep" and record["task"] == "pick"
    assert {"segment", "segment_version", "clock", "frame"} <= set(record)
    assert [(a.name, a.media_type, a.data.decode()) for a in attachments] == [("robot.urdf", "application/xml", urdf)]


def test_no_fps_keeps_original_timestamps(tmp_path: Path, sample_bag: Path) -> None:
    ep = robokit.open(sample_bag)[0]
    out = write([ep], tmp_path)
    joints = messages(out / "episode_000.mcap", "/joint_states")
    assert [t for t, _ in joints] == ep.streams["joints/position"].timestamps.tolist()


def test_derived_topics(sample_mcap: Path, encoding: str) -> None:
    path = sample_mcap / "episode_000.mcap"
    n = len(messages(path, "/tf"))
    (_, ee_path), = messages(path, "/derived/ee_path")
    assert frame_id(ee_path) == "base_link" and len(ee_path.poses) == n
    events = [m for _, m in messages(path, "/episode/events")]
    assert len(events) == 2
    log = [getattr(m, "message", None) or m.msg for _, m in messages(path, "/robokit/log")]
    assert any("resampled to 15 fps" in line for line in log)
    velocity = messages(path, "/derived/joint_velocity")
    assert len(velocity) == n
    first = velocity[1][1]
    v = [j.velocity for j in first.joints] if encoding == "protobuf" else list(first.velocity)
    assert len(v) == 7 and any(abs(x) > 0 for x in v)
    if encoding == "protobuf":
        assert time_ns(events[0].start_time) < time_ns(events[0].end_time)


def test_ros2_opens_in_anyreader(sample_mcap: Path, encoding: str) -> None:
    if encoding == "protobuf":  # rosbags reads profile ros2 only; protobuf files are for Foxglove and mcap
        with pytest.raises(Exception, match="Profile is not ros2"), AnyReader([sample_mcap / "episode_000.mcap"]):
            pass
        return
    with AnyReader([sample_mcap / "episode_000.mcap"]) as r:
        assert sum(1 for _ in r.messages()) == r.message_count
        static = next(c for c in r.connections if c.topic == "/tf_static")
        assert static.ext.offered_qos_profiles[0].durability.name == "TRANSIENT_LOCAL"


def test_bad_options(tmp_path: Path) -> None:
    ep = episode([])
    with pytest.raises(OptionError, match="mcap_encoding 'json'"):
        write([ep], tmp_path, mcap_encoding="json")
    with pytest.raises(ChannelError, match="joints/torque"):
        write([ep], tmp_path, action="joints/torque_delta")
    with pytest.raises(ConversionError, match="no episodes"):
        write([], tmp_path)
    assert not (tmp_path / "mcap").exists()


def test_bad_episode_skipped(tmp_path: Path) -> None:
    good, bad = episode([], "good"), episode([], "bad")
    bad = bad.with_streams({"x/pos": pose("x/pos", "w", "x").take(np.arange(1), np.array([-5]))})
    result = get_converter("mcap").write([bad, good], tmp_path, WriterOptions())
    assert result.files == ["good.mcap"] and result.skipped[0][0] == "bad" and "negative" in result.skipped[0][1]


def test_camera_selection_and_resize(tmp_path: Path) -> None:
    eps = [episode([camera("a/rgb", "a_optical"), camera("b/rgb", "b_optical")])]
    out = write(eps, tmp_path, cameras=["a"], image_size="16x12")
    topics = {c.topic for c in summary(out / "ep.mcap").channels.values()}
    assert "/camera/a/image" in topics and "/camera/b/image" not in topics
    (_, img), = messages(out / "ep.mcap", "/camera/a/image")[:1]
    assert Frame("jpeg", data=bytes(img.data)).array().shape == (12, 16, 3)
    (_, cal), = messages(out / "ep.mcap", "/camera/a/calibration")[:1]
    assert cal.width == 16 and cal.K[0] == pytest.approx(15.0)


class _Generated:
    """Frames made on request, so only what the writer holds is in memory."""

    def iter_frames(self, positions: Sequence[int]) -> Iterator[Frame]:
        for p in positions:
            yield Frame("raw", pixels=np.full((96, 128, 3), p % 256, np.uint8))


def test_memory_flat_in_episode_length(tmp_path: Path) -> None:
    n = 400  # 14 MB of raw frames if they were all held
    cam = ImageStream("top/rgb", ticks(n), source=_Generated(), width=128, height=96, frame_id="top_optical")
    tracemalloc.start()
    try:
        write([episode([cam])], tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 6e6  # one 1 MiB chunk plus a few frames in flight
