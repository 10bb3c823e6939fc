"""ROS `compressedDepth` images (image_transport's compressed_depth plugin) → depth Frames.

A message's `format` is `<encoding>; compressedDepth[ png|rvl]`; its data starts with a 12-byte config
header (int32 format, float32 depthParam[2]). `16UC1` frames hold millimetres (PNG bytes are kept as they
are); `32FC1` frames hold quantized inverse depth, decoded to metres as the plugin does:
`depth = depthParam[0] / (value - depthParam[1])`, 0 → NaN (no reading). RVL data carries uint32 cols and
rows, then the RVL code (Wilson 2017: 4-bit variable-length runs of zeros and zig-zag deltas).
"""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any

import numpy as np
from PIL import Image

from robokit.ros.fields import UnsupportedMessage, as_bytes
from robokit.timeline import Frame

HEADER = 12  # int32 compression format + float32 depthParam[2]
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MILLIMETRE_ENCODINGS = ("16UC1", "mono16")
MAX_PIXELS = 1 << 25  # 33.5 Mpx (8K x 4K): a larger claim is damage, not a depth camera
_MAX_NIBBLES = 11  # 33 bits: more than any pixel count or zig-zag delta of uint16 values needs


def is_compressed_depth(msg: Any) -> bool:
    """Whether a CompressedImage carries image_transport's compressedDepth payload."""
    return "compresseddepth" in str(getattr(msg, "format", "")).lower()


def _encoding(msg: Any) -> tuple[str, str]:
    """(encoding, png|rvl) from the message's format string."""
    fmt = str(msg.format)
    encoding = fmt.split(";", 1)[0].strip()
    codec = "rvl" if fmt.lower().rstrip().endswith("rvl") else "png"
    if encoding not in (*MILLIMETRE_ENCODINGS, "32FC1"):
        raise UnsupportedMessage(f"compressedDepth image of unsupported encoding {encoding!r} (format {fmt!r})")
    return encoding, codec


def decode_rvl(code: bytes, count: int) -> np.ndarray:
    """`count` uint16 values from RVL bytes (little-endian 32-bit words, 4-bit groups from the high end)."""
    words = np.frombuffer(code[: len(code) // 4 * 4], dtype="<u4")
    nibbles = ((words[:, None] >> np.arange(28, -4, -4, dtype=np.uint32)) & 0xF).astype(np.int64).ravel()
    ends = np.flatnonzero((nibbles & 0x8) == 0)  # each variable-length number ends at a nibble without bit 3
    if count and len(ends) < 2:
        raise ValueError("no RVL code")
    starts = np.concatenate(([0], ends[:-1] + 1))
    if len(ends) and int((ends - starts).max()) >= _MAX_NIBBLES:
        raise ValueError("an RVL number is longer than any count or delta can be")
    group = np.repeat(np.arange(len(ends)), ends - starts + 1)
    place = np.arange(len(group)) - np.repeat(starts, ends - starts + 1)
    numbers = np.zeros(len(ends), dtype=np.int64)
    np.add.at(numbers, group, (nibbles[: len(group)] & 0x7) << (3 * place))
    out = np.zeros(count, dtype=np.uint16)
    deltas, spans, at, i = [], [], 0, 0
    while at < count:
        if i + 1 >= len(numbers):
            raise ValueError(f"RVL data ends after {at} of {count} pixels")
        zeros, nonzeros = int(numbers[i]), int(numbers[i + 1])
        at += zeros
        if nonzeros < 0 or at + nonzeros > count or i + 2 + nonzeros > len(numbers):
            raise ValueError(f"RVL data overruns {count} pixels")
        deltas.append(numbers[i + 2: i + 2 + nonzeros])
        spans.append(np.arange(at, at + nonzeros))
        at, i = at + nonzeros, i + 2 + nonzeros
    if deltas:
        zigzag = np.concatenate(deltas)
        values = np.cumsum((zigzag >> 1) ^ -(zigzag & 1)) & 0xFFFF  # uint16 arithmetic, as the reference decoder
        out[np.concatenate(spans)] = values.astype(np.uint16)
    return out


def _plane(data: bytes, codec: str) -> np.ndarray | bytes:
    """The uint16 plane after the header: PNG bytes as they are, RVL decoded."""
    body = data[HEADER:]
    if codec == "png":
        if not body.startswith(_PNG_MAGIC):
            raise UnsupportedMessage("compressedDepth png data does not start with a PNG image")
        return body
    if len(body) < 8:
        raise UnsupportedMessage("compressedDepth rvl data is shorter than its size fields")
    cols, rows = struct.unpack_from("<II", body)
    if cols * rows > MAX_PIXELS:
        raise UnsupportedMessage(f"compressedDepth rvl image of {cols}x{rows} pixels is implausibly large")
    try:
        return decode_rvl(body[8:], cols * rows).reshape(rows, cols)
    except ValueError as err:
        raise UnsupportedMessage(f"compressedDepth rvl data is corrupt ({err})") from err


_PIL_ERRORS = (OSError, ValueError, SyntaxError, EOFError, zlib.error, Image.DecompressionBombError)


def _png_pixels(data: bytes) -> np.ndarray:
    """The uint16 plane of a 16-bit PNG; UnsupportedMessage when it cannot be decoded."""
    try:
        with Image.open(io.BytesIO(data)) as im:
            if im.mode not in ("I;16", "I;16B", "I;16L", "I", "L"):
                raise UnsupportedMessage(f"compressedDepth png is {im.mode}, not a 16-bit grey image")
            return np.asarray(im).astype(np.uint16)
    except _PIL_ERRORS as err:
        raise UnsupportedMessage(f"compressedDepth png cannot be decoded ({err})") from err


def depth_frame(msg: Any) -> Frame:
    """A compressedDepth message as a Frame: 16UC1 PNG bytes kept, RVL and 32FC1 decoded (32FC1 to metres)."""
    data = as_bytes(msg.data)
    encoding, codec = _encoding(msg)
    plane = _plane(data, codec)
    if encoding in MILLIMETRE_ENCODINGS:
        return Frame("png", data=plane) if isinstance(plane, bytes) else Frame("raw", pixels=plane)
    inverse = _png_pixels(plane) if isinstance(plane, bytes) else plane
    quant_a, quant_b = struct.unpack_from("<ff", data, 4)
    with np.errstate(divide="ignore", invalid="ignore"):
        metres = np.float32(quant_a) / (inverse.astype(np.float32) - np.float32(quant_b))
    return Frame("raw", pixels=np.where(inverse == 0, np.float32(np.nan), metres).astype(np.float32))


def probe_depth(msg: Any) -> tuple[int, int, str, str]:
    """(width, height, encoding, storage format) of a compressedDepth message."""
    encoding, codec = _encoding(msg)
    data = as_bytes(msg.data)
    if codec == "rvl":
        if len(data) < HEADER + 8:
            raise UnsupportedMessage("compressedDepth rvl data is shorter than its size fields")
        cols, rows = struct.unpack_from("<II", data, HEADER)
        if cols * rows > MAX_PIXELS:
            raise UnsupportedMessage(f"compressedDepth rvl image of {cols}x{rows} pixels is implausibly large")
        return cols, rows, encoding, "raw"
    body = _plane(data, codec)
    assert isinstance(body, bytes)
    try:
        with Image.open(io.BytesIO(body)) as im:
            width, height = im.width, im.height
    except _PIL_ERRORS as err:
        raise UnsupportedMessage(f"compressedDepth png cannot be decoded ({err})") from err
    millimetres = encoding in MILLIMETRE_ENCODINGS
    return width, height, "16UC1" if millimetres else "32FC1", "png" if millimetres else "raw"
