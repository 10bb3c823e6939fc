"""Depth cameras as ROS records them (16UC1, 32FC1, compressedDepth PNG/RVL) become `<camera>/depth` streams."""

from __future__ import annotations

import struct
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import robokit
from robokit.ros.depth import decode_rvl, depth_frame
from robokit.ros.fields import UnsupportedMessage
from robokit.samples.depthbag import FRAMES, depth_mm, encode_rvl, inverse_depth, write_depth_bag
from robokit.timeline import ImageStream


@pytest.fixture(scope="module")
def episode(tmp_path_factory: pytest.TempPathFactory) -> robokit.Episode:
    return robokit.open(write_depth_bag(tmp_path_factory.mktemp("depth") / "bag"))[0]


def _frames(episode: robokit.Episode, channel: str) -> tuple[ImageStream, list[np.ndarray]]:
    stream = episode.streams[channel]
    assert isinstance(stream, ImageStream) and stream.is_depth and len(stream) == FRAMES
    return stream, [f.array() for f in stream.frames()]


def test_millimetre_cameras_read_exactly(episode: robokit.Episode) -> None:
    for channel, fmt in (("front/depth", "raw"), ("side/depth", "png"), ("back/depth", "raw")):
        stream, frames = _frames(episode, channel)
        assert (stream.encoding, stream.format) == ("16UC1", fmt)
        for t, pixels in enumerate(frames):
            assert pixels.dtype == np.uint16 and np.array_equal(pixels, depth_mm(t))


def test_float_cameras_read_in_metres(episode: robokit.Episode) -> None:
    stream, frames = _frames(episode, "wrist/depth")
    assert stream.encoding == "32FC1"
    for t, metres in enumerate(frames):
        mm = depth_mm(t)
        assert metres.dtype == np.float32 and np.array_equal(np.isnan(metres), mm == 0)
        assert np.array_equal(metres[mm > 0], mm[mm > 0].astype(np.float32) / np.float32(1000))
    stream, frames = _frames(episode, "top/depth")  # compressedDepth 32FC1: quantized inverse depth
    assert stream.encoding == "32FC1"
    for t, metres in enumerate(frames):
        mm, valid = depth_mm(t), depth_mm(t) > 0
        step_mm = (mm / 1000.0) ** 2 / inverse_depth(mm)[1] * 1000  # one inverse-depth quantum, in mm
        assert np.array_equal(np.isnan(metres), ~valid)
        assert np.all(np.abs(metres[valid] * 1000 - mm[valid]) <= step_mm[valid] + 0.5)


def test_rvl_round_trip() -> None:
    rng = np.random.default_rng(3)
    values = rng.integers(0, 65536, 997).astype(np.uint16)
    values[rng.random(997) < 0.3] = 0
    assert np.array_equal(decode_rvl(encode_rvl(values), values.size), values)
    assert np.array_equal(decode_rvl(encode_rvl(np.zeros(40, np.uint16)), 40), np.zeros(40))


@pytest.mark.parametrize("fmt, body", [
    ("8UC3; compressedDepth png", b"\x89PNG\r\n\x1a\n"),  # not a depth encoding
    ("16UC1; compressedDepth png", b"not a png"),
    ("16UC1; compressedDepth rvl", struct.pack("<II", 4, 4)),  # no RVL code for 16 pixels
    ("16UC1; compressedDepth rvl", b"\x01"),
])
def test_damaged_compressed_depth_is_unsupported(fmt: str, body: bytes) -> None:
    msg = SimpleNamespace(format=fmt, data=struct.pack("<iff", 0, 0.0, 0.0) + body)
    with pytest.raises(UnsupportedMessage):
        depth_frame(msg)


def test_info_lists_depth_channels(episode: robokit.Episode, tmp_path: Path) -> None:
    channels = {s.channel for s in episode.info().streams}
    assert {f"{cam}/depth" for cam in ("front", "wrist", "side", "top", "back")} <= channels


def test_seeded_mutations_give_frames_or_unsupported_messages() -> None:
    """Damaged compressedDepth payloads (bit flips, truncations) decode or raise UnsupportedMessage, never else."""
    import io

    from PIL import Image

    mm = depth_mm(1)
    inv, quant_a, quant_b = inverse_depth(mm)
    buf = io.BytesIO()
    Image.fromarray(inv).save(buf, format="PNG")
    messages = [("32FC1; compressedDepth png", struct.pack("<iff", 0, quant_a, quant_b) + buf.getvalue()),
                ("16UC1; compressedDepth rvl", struct.pack("<iffII", 0, 0, 0, mm.shape[1], mm.shape[0])
                 + encode_rvl(mm))]
    rng = np.random.default_rng(18)
    for fmt, data in messages:
        for _ in range(150):
            mutated = bytearray(data)
            for _ in range(int(rng.integers(1, 4))):
                mutated[int(rng.integers(0, len(mutated)))] ^= 1 << int(rng.integers(0, 8))
            if rng.random() < 0.3:
                mutated = mutated[: int(rng.integers(0, len(mutated)))]
            try:
                frame = depth_frame(SimpleNamespace(format=fmt, data=bytes(mutated)))
            except UnsupportedMessage:
                continue
            assert frame.pixels is not None and frame.pixels.ndim == 2
