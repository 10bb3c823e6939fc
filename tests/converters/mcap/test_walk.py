"""Walking uncompressed chunks in the file (headers only for frames after the first) reads exactly what reading
chunks whole reads: the same streams, stamps, frames, warnings and losses, on sound and on damaged bags."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mcap.writer import CompressionType, Writer

import robokit
from robokit.converters.mcap import chunks
from robokit.ros.bagwriter import START_NS, TOPIC_TYPES, header, joint_state, jpeg_image, raw_image, typestore
from tests.ros.walking import damaged_copy, walked_and_whole

TOPICS = ("/joint_states", "/camera/front/image_raw", "/camera/wrist/image_raw/compressed")


def _bag(out: Path, bad_frames: bool = False) -> Path:
    """An MCAP as rosbag2 writes it (uncompressed chunks, no CRCs) but in small chunks: raw and JPEG frames at
    10 Hz, some with a longer frame_id, and joint states at 50 Hz; `bad_frames`: raw frames 5 and 10 sound
    messages but no frames of the topic (data shorter than their size says; half the size of the others), JPEG
    frames 7 and 14 no JPEG (empty; text)."""
    ts = typestore()
    rng = np.random.default_rng(3)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as f:
        w = Writer(f, chunk_size=6000, compression=CompressionType.NONE, enable_crcs=False)
        w.start("ros2", "test")
        channels = {}
        for topic in TOPICS:
            msgtype = TOPIC_TYPES[topic]
            schema = w.register_schema(msgtype, "ros2msg", ts.generate_msgdef(msgtype, ros_version=2)[0].encode())
            channels[topic] = w.register_channel(topic, "cdr", schema)

        def write(topic: str, t: int, msg: Any) -> None:
            w.add_message(channels[topic], log_time=t, publish_time=t,
                          data=bytes(ts.serialize_cdr(msg, TOPIC_TYPES[topic])))

        for k in range(100):
            t = START_NS + k * 20_000_000
            write("/joint_states", t, joint_state(ts, header(ts, t, "base"), ("a", "b"), np.ones(2) * k,
                                                  np.zeros(2), np.zeros(2)))
            if k % 5 == 0:
                pixels = rng.integers(0, 255, (24, 32, 3), dtype=np.uint8)
                raw = raw_image(ts, header(ts, t, "front" * (k % 3)), pixels)
                if bad_frames and k == 25:
                    raw.data = raw.data[:-30]
                if bad_frames and k == 50:
                    raw = raw_image(ts, raw.header, pixels[::2, ::2])
                write("/camera/front/image_raw", t, raw)
                jpeg = jpeg_image(ts, header(ts, t, "wrist"), pixels)
                if bad_frames and k in (35, 70):  # empty, and not an image
                    jpeg.data = np.frombuffer(b"" if k == 35 else b"no image" * 8, np.uint8)
                write("/camera/wrist/image_raw/compressed", t, jpeg)
        w.finish()
    return out


def _both(path: Path, monkeypatch: pytest.MonkeyPatch, verify: bool = True) -> tuple[Any, Any, int]:
    return walked_and_whole(path, monkeypatch, chunks, "_walkable", verify)


def test_a_walked_bag_reads_as_when_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    walk, whole, walked = _both(_bag(tmp_path / "bag.mcap"), monkeypatch)
    assert walked > 20 and walk == whole
    assert isinstance(walk, list) and len(walk[0][0]) >= 4 and not walk[0][1]


def test_heads_fall_back_to_the_whole_message_when_it_is_damaged(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame whose data length runs past its record is dropped with a warning by both paths."""
    mcap = _bag(tmp_path / "bag.mcap")
    data = bytearray(mcap.read_bytes())
    at = data.rfind(b"front\x00")  # the last raw frame's frame_id: its data length follows height..step
    length_at = data.find(b"rgb8\x00", at) + 5 + 3 + 4
    data[length_at:length_at + 4] = (10**6).to_bytes(4, "little")
    mcap.write_bytes(bytes(data))
    walk, whole, walked = _both(mcap, monkeypatch)
    assert walked and walk == whole
    assert any("failed to decode" in w for w in walk[0][1])


def test_frames_that_cannot_be_the_topics_are_left_out_with_a_warning(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Found in the index pass, whether it reads frame headers (walked) or whole messages: the other frames
    export (before, the first such frame failed every format of the episode when it was encoded)."""
    mcap = _bag(tmp_path / "bag.mcap", bad_frames=True)
    walk, whole, walked = _both(mcap, monkeypatch)
    assert walked and walk == whole
    (ep,) = robokit.open(mcap)
    assert len(ep.streams["front/rgb"]) == 18
    (skip,) = [s for s in ep.skipped if s.topic == "/camera/front/image_raw"]
    assert skip.count == 1 and skip.reason == ("1 of 20 messages failed to decode (ValueError: image data of 2274 "
                                               "bytes is too short for 32x24 rgb8 step 96)")
    assert "/camera/front/image_raw: 1 frame(s) of another size or encoding than the topic's other 18 (32x24 rgb8) " \
           "left out (1 at 16x12 rgb8)" in ep.warnings
    assert [loss.messages for loss in ep.losses if loss.topic == "/camera/front/image_raw"] == [1, 1]
    (skip,) = [s for s in ep.skipped if s.topic == "/camera/wrist/image_raw/compressed"]
    assert skip.count == 2 and skip.reason == ("2 of 20 messages failed to decode (ValueError: compressed image data "
                                               "of 0 bytes is neither JPEG nor PNG)")
    assert len(ep.streams["wrist/rgb"]) == 18
    assert all(f.array().shape == (24, 32, 3) for f in ep.streams["wrist/rgb"].frames())
    assert all(f.array().shape == (24, 32, 3) for f in ep.streams["front/rgb"].frames())


@pytest.mark.parametrize("seed", range(24))
def test_damaged_bags_read_alike_walked_or_whole(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    source = tmp_path_factory.getbasetemp() / "walk-seed.mcap"
    if not source.exists():
        _bag(source)
    walk, whole, _ = _both(damaged_copy(source, tmp_path / "bag.mcap", seed), monkeypatch)
    assert walk == whole


def test_the_scenario_reads_alike_walked_or_whole_without_crc_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     bags: Any, ros2_msgs: Any) -> None:
    """Every mapped ROS type, padded, big-endian and bgr images among them, in 4 KiB chunks with CRCs: walked when
    the CRCs are not checked."""
    path = bags.write_mcap_ros(tmp_path / "scenario.mcap", bags.scenario(ros2_msgs), ros2_msgs.ts,
                               compression=CompressionType.NONE)
    walk, whole, walked = _both(path, monkeypatch, verify=False)
    assert walked > 3 and walk == whole and isinstance(walk, list)
    assert _both(path, monkeypatch)[2] == 0  # checked CRCs need the whole chunk
