"""Coded video topics read as image streams: every message type, decode on demand, keyframes, damage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from foxglove_schemas_protobuf.CompressedVideo_pb2 import CompressedVideo
from google.protobuf.timestamp_pb2 import Timestamp

import robokit
from robokit.errors import SourceError
from robokit.ros.bagwriter import START_NS, BagWriter
from robokit.ros.video import is_keyframe, video_codec
from robokit.samples.videobag import COMPRESSED_VIDEO, encode, frame_index, video_store, write_video_bag
from robokit.timeline import ImageStream
from robokit.timeline.video import VideoFrames


def _camera(path: Path) -> ImageStream:
    (ep,) = robokit.open(path)
    stream = ep["front/rgb"]
    assert isinstance(stream, ImageStream)
    return stream


@pytest.mark.parametrize("kind", ["foxglove", "ffmpeg", "compressed_image"])
def test_coded_video_topics_decode_on_demand(tmp_path: Path, kind: str) -> None:
    stream = _camera(write_video_bag(tmp_path / "bag", frames=65, width=160, height=96, kind=kind))
    assert (stream.width, stream.height, stream.format, len(stream)) == (160, 96, "h264", 65)
    assert isinstance(stream.source, VideoFrames)
    assert np.flatnonzero(stream.source.keyframes).tolist() == [0, 30, 60]
    assert [frame_index(f.array()) for f in stream.frames()] == list(range(65))
    # random access: back, ahead across keyframes, repeats
    picks = [40, 3, 64, 64, 31, 0, 59]
    assert [frame_index(f.array()) for f in stream.frames(picks)] == picks
    assert stream.source.copy_problem(stream.positions.tolist()) == ""


def test_b_frames_decode_in_display_order_and_are_told(tmp_path: Path) -> None:
    stream = _camera(write_video_bag(tmp_path / "bag", frames=40, width=160, height=96, bframes=2))
    assert [frame_index(f.array()) for f in stream.frames()] == list(range(40))
    assert isinstance(stream.source, VideoFrames)
    assert "B-frames" in stream.source.copy_problem(stream.positions.tolist())


def test_frames_before_the_first_keyframe_are_dropped(tmp_path: Path) -> None:
    (ep,) = robokit.open(write_video_bag(tmp_path / "bag", frames=40, width=160, height=96, skip=5))
    stream = ep["front/rgb"]
    assert isinstance(stream, ImageStream) and len(stream) == 10
    assert [frame_index(f.array()) for f in stream.frames()] == list(range(30, 40))
    assert any("25 frame(s) before the first keyframe dropped" in w for w in ep.warnings)


def test_foxglove_protobuf_compressed_video(tmp_path: Path, bags: Any) -> None:
    records = []
    for i, (data, _) in enumerate(encode(35, 160, 96, 30, "h264", gop=30)):
        ns = bags.T0 + i * 33_333_333
        stamp = Timestamp(seconds=ns // 10**9, nanos=ns % 10**9)
        records.append(("/camera/front/video", CompressedVideo(timestamp=stamp, frame_id="front", data=data,
                                                               format="h264"), ns))
    stream = _camera(bags.write_foxglove(tmp_path / "video.mcap", records))
    assert [frame_index(f.array()) for f in stream.frames([0, 34, 29, 30])] == [0, 34, 29, 30]


def test_damaged_packet_is_a_typed_error_not_a_traceback(tmp_path: Path) -> None:
    stream = _camera(write_video_bag(tmp_path / "bag", frames=40, width=160, height=96, damage=12))
    try:  # the decoder conceals what it can; what it cannot is a SourceError naming the frame
        frames = [f.array() for f in stream.frames()]
    except SourceError:
        return
    assert len(frames) == 40


def test_damaged_first_keyframe_starts_at_the_next(tmp_path: Path) -> None:
    (ep,) = robokit.open(write_video_bag(tmp_path / "bag", frames=40, width=160, height=96, damage=0))
    stream = ep["front/rgb"]
    assert isinstance(stream, ImageStream)
    assert [frame_index(f.array()) for f in stream.frames()] == list(range(30, 40))
    assert any("before the first keyframe dropped" in w for w in ep.warnings)


def test_other_video_formats_skip_the_topic() -> None:
    class Msg:
        format = "vp9"
        data = b""

    with pytest.raises(ValueError, match="unsupported video format 'vp9'"):
        video_codec(Msg(), "foxglove.CompressedVideo")
    assert video_codec(Msg(), "sensor_msgs/msg/CompressedImage") is None  # a still image format then


@pytest.mark.parametrize("codec", ["hevc", "av1"])
def test_keyframes_of_other_codecs(codec: str) -> None:
    flags = [is_keyframe(codec, data) for data, _ in encode(12, 64, 48, 30, codec, gop=5)]
    assert flags[0] and flags.count(True) >= 2


def test_garbage_video_skips_the_topic(tmp_path: Path) -> None:
    ts = video_store()
    rng = np.random.default_rng(0)
    with BagWriter(tmp_path / "bag", ts, {"/camera/front/video": COMPRESSED_VIDEO}) as bag:
        for i in range(5):
            data = b"\x00\x00\x00\x01\x65" + rng.bytes(50) if i % 2 else rng.bytes(40)  # an "IDR" of noise
            stamp = ts.types["builtin_interfaces/msg/Time"](sec=START_NS // 10**9 + i, nanosec=0)
            bag.write(START_NS + i * 10**9, "/camera/front/video", ts.types[COMPRESSED_VIDEO](
                timestamp=stamp, frame_id="f", data=np.frombuffer(data, np.uint8), format="h264"))
    (ep,) = robokit.open(tmp_path / "bag")
    assert "front/rgb" not in ep.streams
    assert any("keyframe decodes" in w for w in ep.warnings)
