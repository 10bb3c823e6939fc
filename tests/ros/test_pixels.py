"""Image messages → Frames: every raw encoding (padding, endianness, bgr) and JPEG/PNG passthrough."""

from __future__ import annotations

from types import SimpleNamespace as NS
from typing import Any

import numpy as np
import pytest

from robokit.ros.fields import UnsupportedMessage
from robokit.ros.heads import Header, ImageHead, Stamp
from robokit.ros.pixels import encoded_bytes, frame_layout, image_frame, raw_pixels


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
    out = raw_pixels(raw_msg(pixels, encoding, pad, big))
    assert out.dtype == np.dtype(dtype) and out.dtype.isnative
    assert np.array_equal(out, pixels)
    if not pad and (not big or out.itemsize == 1):  # nothing to convert: a read-only view of the message, no copy
        assert not out.flags.writeable


def test_bgr_becomes_rgb() -> None:
    rgb = np.arange(3 * 4 * 3, dtype=np.uint8).reshape(3, 4, 3)
    assert np.array_equal(raw_pixels(raw_msg(rgb[..., ::-1].copy(), "bgr8")), rgb)
    rgba = np.arange(3 * 4 * 4, dtype=np.uint8).reshape(3, 4, 4)
    bgra = rgba[..., [2, 1, 0, 3]].copy()
    assert np.array_equal(raw_pixels(raw_msg(bgra, "bgra8")), rgba)


def test_raw_pixels_errors() -> None:
    with pytest.raises(UnsupportedMessage, match="yuv422"):
        raw_pixels(NS(height=1, width=1, encoding="yuv422", step=2, data=b"\0\0"))
    with pytest.raises(ValueError, match="too short"):
        raw_pixels(NS(height=2, width=2, encoding="rgb8", step=6, data=b"\0" * 6))


def test_frame_layout_of_a_later_frame() -> None:
    image, head = "sensor_msgs/msg/Image", Header(Stamp(0, 0), "")
    bgr = NS(height=3, width=2, encoding="bgr8", step=6, data=b"\0" * 18)
    assert frame_layout(bgr, image, "raw") == (2, 3, "rgb8", "raw")  # as decoded
    head_only = ImageHead(head, 3, 2, "rgb8", 8, 24)  # the index pass: the data length only
    assert frame_layout(head_only, image, "raw") == (2, 3, "rgb8", "raw")
    with pytest.raises(ValueError, match="too short"):
        frame_layout(ImageHead(head, 3, 2, "rgb8", 8, 23), image, "raw")
    with pytest.raises(ValueError, match="yuv422"):  # not UnsupportedMessage: that would skip the whole topic
        frame_layout(NS(height=3, width=2, encoding="yuv422", step=4, data=b"\0" * 12), image, "raw")
    compressed, jpeg = "sensor_msgs/msg/CompressedImage", b"\xff\xd8\xff\xe0"
    assert frame_layout(ImageHead(head, data_size=900, data_head=jpeg), compressed, "jpeg") is None  # size: decoded
    assert frame_layout(NS(format="jpeg", data=np.frombuffer(jpeg * 9, np.uint8)), compressed, "jpeg") is None
    assert frame_layout(ImageHead(head, data_size=900, data_head=None), compressed, "jpeg") is None  # not in prefix
    for empty in (ImageHead(head, data_size=0, data_head=b""), NS(format="jpeg", data=b"")):
        with pytest.raises(ValueError, match="compressed image data of 0 bytes is neither JPEG nor PNG"):
            frame_layout(empty, compressed, "jpeg")
    assert frame_layout(NS(format="16UC1; compressedDepth rvl", data=b"\0" * 30), compressed, "raw") is None


def test_encoded_bytes(bags: Any) -> None:
    jpeg = bags.WRIST_JPEG[0]
    png = bags.jpeg(np.zeros((2, 2), np.uint16), "PNG")
    assert encoded_bytes(NS(data=jpeg, format="jpeg")) == ("jpeg", jpeg)
    assert encoded_bytes(NS(data=np.frombuffer(png, np.uint8), format="png")) == ("png", png)
    depth = b"\x00" * 12 + png  # ROS compressedDepth: 12-byte config header, then the PNG
    assert encoded_bytes(NS(data=depth, format="16UC1; compressedDepth png")) == ("png", png)
    with pytest.raises(UnsupportedMessage, match="webp"):
        encoded_bytes(NS(data=b"RIFF....WEBP", format="webp"))
    frame = image_frame(NS(data=jpeg, format="jpeg"), "sensor_msgs/msg/CompressedImage")
    assert frame.format == "jpeg" and frame.data == jpeg


@pytest.mark.parametrize("frame_id", ["a", "ab"])  # the data lands at an odd, then an even offset
def test_16_bit_pixels_read_from_a_ros1_message_are_aligned(frame_id: str) -> None:
    from rosbags.typesys import Stores, get_typestore

    from robokit.ros.heads import image_whole

    store = get_typestore(Stores.ROS1_NOETIC)
    types = store.types
    depth = np.arange(12, dtype=np.uint16).reshape(3, 4) * 1000 + 7
    header = types["std_msgs/msg/Header"](1, types["builtin_interfaces/msg/Time"](1, 2), frame_id)
    msg = types["sensor_msgs/msg/Image"](header, 3, 4, "16UC1", 0, 8, depth.view(np.uint8).reshape(-1))
    parse = image_whole("sensor_msgs/msg/Image", ros1=True)
    assert parse is not None
    read = parse(bytes(store.serialize_ros1(msg, "sensor_msgs/msg/Image")))
    assert read is not None
    pixels = raw_pixels(read)
    assert pixels.flags.aligned and not pixels.flags.writeable and np.array_equal(pixels, depth)
