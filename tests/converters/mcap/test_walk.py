"""Walking uncompressed chunks in the file (headers only for frames after the first) reads exactly what reading
chunks whole reads: the same streams, stamps, frames, warnings and losses, on sound and on damaged bags."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mcap.writer import CompressionType, Writer

from robokit.converters.mcap import chunks
from robokit.errors import RobokitError
from robokit.ros import heads
from robokit.ros.bagwriter import START_NS, TOPIC_TYPES, header, joint_state, jpeg_image, raw_image, typestore
from tests.fuzz.mutate import _bitflip, _huge_length, _truncate, _zero

TOPICS = ("/joint_states", "/camera/front/image_raw", "/camera/wrist/image_raw/compressed")


def _bag(out: Path) -> Path:
    """An MCAP as rosbag2 writes it (uncompressed chunks, no CRCs) but in small chunks: raw and JPEG frames at
    10 Hz, some with a longer frame_id, and joint states at 50 Hz."""
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
                write("/camera/front/image_raw", t, raw_image(ts, header(ts, t, "front" * (k % 3)), pixels))
                write("/camera/wrist/image_raw/compressed", t, jpeg_image(ts, header(ts, t, "wrist"), pixels))
        w.finish()
    return out


def _read(path: Path) -> Any:
    """Everything a reader's caller sees of the recording, frames hashed; or the error it raised."""
    import robokit

    try:
        episodes = robokit.open(path)
        seen = []
        for ep in episodes:
            streams = {}
            for name, s in sorted(ep.streams.items()):
                digest = hashlib.sha1(np.asarray(s.timestamps).tobytes())
                if hasattr(s, "frames"):
                    for frame in s.frames(range(len(s))):
                        digest.update(np.ascontiguousarray(frame.array()).tobytes())
                streams[name] = (len(s.timestamps), digest.hexdigest())
            seen.append((streams, ep.warnings, [tuple(vars(loss).values()) for loss in ep.losses]))
        return seen
    except RobokitError as exc:
        return f"{type(exc).__name__}: {exc}"


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, int]:
    walked = 0
    original = chunks._walkable

    def counted(*args: Any) -> Any:
        nonlocal walked
        span = original(*args)
        walked += span is not None
        return span

    monkeypatch.setattr(chunks, "_walkable", counted)
    monkeypatch.setattr(heads, "WALK_ABOVE", 0)
    walk = _read(path)
    monkeypatch.setattr(heads, "WALK_ABOVE", 1 << 62)
    whole = _read(path)
    return walk, whole, walked


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


@pytest.mark.parametrize("seed", range(24))
def test_damaged_bags_read_alike_walked_or_whole(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    source = tmp_path_factory.getbasetemp() / "walk-seed.mcap"
    if not source.exists():
        _bag(source)
    mcap = tmp_path / "bag.mcap"
    data = bytearray(source.read_bytes())
    rng = random.Random(seed)
    rng.choice((_bitflip, _truncate, _zero, _huge_length))(data, rng)
    mcap.write_bytes(bytes(data))
    walk, whole, _ = _both(mcap, monkeypatch)
    assert walk == whole
