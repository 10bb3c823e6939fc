"""Image messages → Frames: raw encodings decoded (row padding, byte order, bgr), JPEG/PNG bytes kept."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from PIL import Image

from robokit.ros.depth import depth_frame, is_compressed_depth, probe_depth
from robokit.ros.fields import UnsupportedMessage, as_bytes
from robokit.ros.heads import DATA_HEAD, ImageHead
from robokit.ros.video import video_codec
from robokit.timeline import Frame

# encoding → (dtype, channels, encoding of the decoded frame)
RAW_LAYOUTS: dict[str, tuple[str, int, str]] = {
    "rgb8": ("u1", 3, "rgb8"),
    "bgr8": ("u1", 3, "rgb8"),
    "8UC3": ("u1", 3, "rgb8"),
    "rgba8": ("u1", 4, "rgba8"),
    "bgra8": ("u1", 4, "rgba8"),
    "mono8": ("u1", 1, "mono8"),
    "8UC1": ("u1", 1, "mono8"),
    "mono16": ("u2", 1, "mono16"),
    "16UC1": ("u2", 1, "16UC1"),
    "32FC1": ("f4", 1, "32FC1"),
}
_BGR = ("bgr8", "bgra8")
_PIL_ENCODINGS = {"L": "mono8", "I;16": "16UC1", "I;16B": "16UC1", "I": "16UC1", "RGBA": "rgba8"}
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_JPEG_MAGIC = b"\xff\xd8"
COMPRESSED_TYPES = ("sensor_msgs/msg/CompressedImage", "foxglove.CompressedImage")


def raw_pixels(msg: Any) -> np.ndarray:
    """A raw image as (H, W[, C]) in native byte order: row padding (`step`) dropped, bgr → rgb."""
    encoding = str(msg.encoding)
    if encoding not in RAW_LAYOUTS:
        raise UnsupportedMessage(f"unsupported image encoding {encoding!r}")
    dtype, channels, _ = RAW_LAYOUTS[encoding]
    height, width = int(msg.height), int(msg.width)
    data = msg.data
    buf = data.view(np.uint8).reshape(-1) if isinstance(data, np.ndarray) else np.frombuffer(as_bytes(data), np.uint8)
    row, step = _rows(msg, buf.size)
    rows = np.ascontiguousarray(buf[: height * step].reshape(height, step)[:, :row])
    order = ">" if int(getattr(msg, "is_bigendian", 0) or 0) else "<"
    pixels = rows.view(np.dtype(order + dtype)).reshape((height, width, channels) if channels > 1 else (height, width))
    pixels = pixels.astype(np.dtype(dtype).newbyteorder("="), copy=False)  # read-only, like decoded JPEG frames
    if not pixels.flags.aligned:  # 16-bit samples at an odd offset of a ROS 1 message: C libraries expect aligned
        pixels = pixels.copy()
        pixels.flags.writeable = False
    if encoding in _BGR:
        pixels = pixels[..., [2, 1, 0, 3][:channels]]
    return pixels


def encoded_bytes(msg: Any) -> tuple[str, bytes]:
    """(jpeg|png, bytes) of a compressed image; ROS `compressedDepth` loses its 12-byte header."""
    data = as_bytes(msg.data)
    fmt = _encoded_magic(data)
    if fmt is None:
        raise UnsupportedMessage(f"unsupported compressed image format {getattr(msg, 'format', '')!r}")
    return fmt, data if data.startswith((_JPEG_MAGIC, _PNG_MAGIC)) else data[12:]


def _encoded_magic(data: bytes) -> str | None:
    """jpeg or png from a compressed image's first `DATA_HEAD` bytes (a compressedDepth PNG after its 12-byte
    header), None for anything else."""
    if data.startswith(_JPEG_MAGIC):
        return "jpeg"
    if data.startswith(_PNG_MAGIC) or data[12:20] == _PNG_MAGIC:
        return "png"
    return None


def image_frame(msg: Any, msgtype: str) -> Frame:
    """One image message as a Frame: JPEG/PNG bytes kept as they are, raw images decoded; a coded video frame
    as its packet (`format` the codec)."""
    codec = video_codec(msg, msgtype)
    if codec is not None:
        return Frame(codec, data=as_bytes(msg.data))
    if msgtype in COMPRESSED_TYPES:
        if is_compressed_depth(msg):
            return depth_frame(msg)
        fmt, data = encoded_bytes(msg)
        return Frame(fmt, data=data)
    return Frame("raw", pixels=raw_pixels(msg))


def _rows(msg: Any, size: int) -> tuple[int, int]:
    """(pixel bytes, bytes with padding) of a row of a raw image whose data has `size` bytes; raises when the
    data cannot hold the rows its fields say."""
    dtype, channels, _ = RAW_LAYOUTS[str(msg.encoding)]
    height, width = int(msg.height), int(msg.width)
    row = width * channels * int(dtype[1])
    step = int(msg.step) or row
    if step < row or size < height * step:
        raise ValueError(f"image data of {size} bytes is too short for {width}x{height} {msg.encoding} step {step}")
    return row, step


def _data_size(msg: Any) -> int:
    """Bytes of an image's data (an `ImageHead` from the index pass gives the count without the data)."""
    if isinstance(msg, ImageHead):
        return msg.data_size
    data = msg.data
    return int(data.nbytes) if isinstance(data, np.ndarray) else len(as_bytes(data) if isinstance(data, str) else data)


def frame_layout(msg: Any, msgtype: str, stored: str) -> tuple[int, int, str, str] | None:
    """`probe` of a frame after its topic's first (None for a compressed one: only decoding tells its size).
    ValueError, so that the frame alone is left out, when a raw frame's data is too short or its encoding
    unsupported, or when a frame of a JPEG or PNG topic (`stored`: the first frame's format) is neither."""
    if msgtype in COMPRESSED_TYPES:
        if stored not in ("jpeg", "png"):  # compressedDepth: its PNG or RVL is checked when decoded
            return None
        if isinstance(msg, ImageHead):
            head = msg.data_head  # None: past the prefix, not checked here
        else:
            data = msg.data
            head = as_bytes(data if isinstance(data, str) else data[:DATA_HEAD])[:DATA_HEAD]  # str: base64 (JSON)
        if head is not None and not _encoded_magic(head):
            raise ValueError(f"compressed image data of {_data_size(msg)} bytes is neither JPEG nor PNG")
        return None
    try:
        return probe(msg, msgtype)
    except UnsupportedMessage as err:  # not the topic's fault, so not a skip of the whole topic
        raise ValueError(str(err)) from err


def probe(msg: Any, msgtype: str) -> tuple[int, int, str, str]:
    """(width, height, decoded encoding, storage format) of a first frame, without keeping pixels; raises when a
    raw frame's data is too short for its fields."""
    if msgtype in COMPRESSED_TYPES:
        if is_compressed_depth(msg):
            return probe_depth(msg)
        fmt, data = encoded_bytes(msg)
        with Image.open(io.BytesIO(data)) as im:
            return im.width, im.height, _PIL_ENCODINGS.get(im.mode, "rgb8"), fmt
    encoding = str(msg.encoding)
    if encoding not in RAW_LAYOUTS:
        raise UnsupportedMessage(f"unsupported image encoding {encoding!r}")
    _rows(msg, _data_size(msg))
    return int(msg.width), int(msg.height), RAW_LAYOUTS[encoding][2], "raw"
