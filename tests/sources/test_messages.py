"""Decoded message objects → samples: stamps, clocks, images, joint states, type names, JSON access."""

from __future__ import annotations

from types import SimpleNamespace as NS
from typing import Any

import numpy as np
import pytest

from robokit.sources import messages
from robokit.sources.messages import UnsupportedMessage


def raw_msg(pixels: np.ndarray, encoding: str, pad: int = 0, big: bool = False) -> NS:
    h, w = pixels.shape[:2]
    data = pixels.astype(pixels.dtype.newbyteorder(">" if big else "<")).reshape(h, -1).view(np.uint8)
    rows = np.concatenate([data, np.full((h, pad), 0xAB, np.uint8)], axis=1)
    return NS(height=h, width=w, encoding=encoding, is_bigendian=int(big), step=rows.shape[1], data=rows.tobytes())


@pytest.mark.parametrize(
    ("encoding", "dtype", "channels"),
    [
        ("rgb8", np.uint8, 3),
        ("rgba8", np.uint8, 4),
        ("mono8", np.uint8, 1),
        ("8UC1", np.uint8, 1),
        ("8UC3", np.uint8, 3),
        ("mono16", np.uint16, 1),
        ("16UC1", np.uint16, 1),
        ("32FC1", np.float32, 1),
    ],
)
@pytest.mark.parametrize("pad", [0, 5])
@pytest.mark.parametrize("big", [False, True])
def test_raw_pixels(encoding: str, dtype: Any, channels: int, pad: int, big: bool) -> None:
    shape = (3, 4, channels) if channels > 1 else (3, 4)
    pixels = (np.arange(np.prod(shape)) * 37 % 251).astype(dtype).reshape(shape)
    out = messages.raw_pixels(raw_msg(pixels, encoding, pad, big))
    assert out.dtype == np.dtype(dtype) and out.dtype.isnative and out.flags.writeable
    assert np.array_equal(out, pixels)


def test_bgr_becomes_rgb() -> None:
    rgb = np.arange(3 * 4 * 3, dtype=np.uint8).reshape(3, 4, 3)
    assert np.array_equal(messages.raw_pixels(raw_msg(rgb[..., ::-1].copy(), "bgr8")), rgb)
    rgba = np.arange(3 * 4 * 4, dtype=np.uint8).reshape(3, 4, 4)
    bgra = rgba[..., [2, 1, 0, 3]].copy()
    assert np.array_equal(messages.raw_pixels(raw_msg(bgra, "bgra8")), rgba)


def test_raw_pixels_errors() -> None:
    with pytest.raises(UnsupportedMessage, match="yuv422"):
        messages.raw_pixels(NS(height=1, width=1, encoding="yuv422", step=2, data=b"\0\0"))
    with pytest.raises(ValueError, match="too short"):
        messages.raw_pixels(NS(height=2, width=2, encoding="rgb8", step=6, data=b"\0" * 6))


def test_encoded_bytes(bags: Any) -> None:
    jpeg = bags.WRIST_JPEG[0]
    png = bags.jpeg(np.zeros((2, 2), np.uint16), "PNG")
    assert messages.encoded_bytes(NS(data=jpeg, format="jpeg")) == ("jpeg", jpeg)
    assert messages.encoded_bytes(NS(data=np.frombuffer(png, np.uint8), format="png")) == ("png", png)
    depth = b"\x00" * 12 + png  # ROS compressedDepth: 12-byte config header, then the PNG
    assert messages.encoded_bytes(NS(data=depth, format="16UC1; compressedDepth png")) == ("png", png)
    with pytest.raises(UnsupportedMessage, match="webp"):
        messages.encoded_bytes(NS(data=b"RIFF....WEBP", format="webp"))
    frame = messages.image_frame(NS(data=jpeg, format="jpeg"), "sensor_msgs/msg/CompressedImage")
    assert frame.format == "jpeg" and frame.data == jpeg


@pytest.mark.parametrize(
    "stamp",
    [
        NS(sec=3, nanosec=5),
        NS(secs=3, nsecs=5),
        NS(seconds=3, nanos=5),
        NS(sec=3, nsec=5),
        messages.wrap_json({"sec": 3, "nsec": 5}),
    ],
)
def test_time_ns(stamp: Any) -> None:
    assert messages.time_ns(stamp) == 3_000_000_005
    assert messages.header_stamp(NS(header=NS(stamp=stamp))) == 3_000_000_005
    assert messages.header_stamp(NS(timestamp=stamp)) == 3_000_000_005
    assert messages.header_stamp(NS(data="no stamp")) == 0


def test_normalize_type() -> None:
    assert messages.normalize_type("sensor_msgs/Image") == "sensor_msgs/msg/Image"
    assert messages.normalize_type("sensor_msgs/msg/Image") == "sensor_msgs/msg/Image"
    assert messages.normalize_type("foxglove_msgs/msg/RawImage") == "foxglove.RawImage"
    assert messages.normalize_type("foxglove.RawImage") == "foxglove.RawImage"
    assert (
        messages.normalize_type("example_interfaces/srv/AddTwoInts_Event") == "example_interfaces/srv/AddTwoInts_Event"
    )


def test_clock_choice() -> None:
    def clock(stamps: list[int], logs: list[int]) -> tuple[list[int], str]:
        c = messages.Clock()
        for s, t in zip(stamps, logs, strict=True):
            c.add(s, t)
        times, source = c.resolve()
        return times.tolist(), source

    s = 10**18
    assert clock([s, s + 10], [s + 5, s + 15]) == ([s, s + 10], "header")
    assert clock([0, s + 10], [s + 5, s + 15]) == ([s + 5, s + 15], "log")  # one zero stamp
    assert clock([100, 200], [s, s + 100]) == ([s, s + 100], "log")  # sim time vs wall clock
    assert clock([], []) == ([], "log")


def test_joint_state_by_name_and_json() -> None:
    b = messages.builder_for("/joint_states", "sensor_msgs/msg/JointState")
    assert b is not None
    msg = messages.wrap_json
    b.add(msg({"name": ["a", "b"], "position": [1, 2], "velocity": [], "effort": []}), 10, 0)
    b.add(msg({"name": ["b", "a", "z"], "position": [4, 3, 9], "velocity": [], "effort": [1, 1, 1]}), 20, 1)
    streams = {s.name: s for s in b.build()}
    assert set(streams) == {"joints/position", "joints/effort"}
    assert streams["joints/position"].values.tolist() == [[1, 2], [3, 4]]
    assert np.isnan(streams["joints/effort"].values[0]).all() and streams["joints/effort"].values[1].tolist() == [1, 1]
    assert any("'z'" in w for w in b.warnings)


def test_json_message_access() -> None:
    m = messages.wrap_json({"header": {"stamp": {"sec": 1, "nanosec": 2}}, "items": [{"x": 1}], "v": 3})
    assert m.v == 3 and m.items[0].x == 1 and messages.header_stamp(m) == 1_000_000_002
    with pytest.raises(AttributeError):
        _ = m.missing


def test_unmapped_type_has_no_builder() -> None:
    assert messages.builder_for("/x", "turtlesim/msg/Pose") is None
