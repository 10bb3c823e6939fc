"""Camera frames as MCAP payloads: JPEG/PNG bytes passed through, raw frames encoded once in worker threads
(`converters.images.in_order`: a few frames ahead, a frame repeated by resampling encoded once)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Executor

import numpy as np

from robokit.converters.images import in_order
from robokit.errors import ConversionError
from robokit.timeline import Frame, ImageStream
from robokit.timeline.images import ENCODED_FORMATS, encode_image, frame_at

JPEG_QUALITY = 90
RAW_ENCODINGS = ("32FC1", "16UC1")  # depth: written as raw images (foxglove.RawImage / sensor_msgs Image)
Payload = tuple[str, bytes | np.ndarray]  # (jpeg | png | raw, bytes or pixels)


def is_raw(stream: ImageStream) -> bool:
    """Whether the stream's frames are written uncompressed (RawImage / sensor_msgs Image)."""
    return stream.encoding in RAW_ENCODINGS


def payload(frame: Frame, prefer: str, raw: bool, camera: str) -> Payload:
    """The bytes to write: encoded frames as recorded (SourceError when they end early); raw ones as `prefer` when
    it fits the pixels, else PNG."""
    if frame.data is not None and frame.format in ENCODED_FORMATS and not raw:
        return frame.format, frame.recorded()
    pixels = frame.array()
    if raw:
        return "raw", pixels
    if pixels.dtype not in (np.uint8, np.uint16):
        raise ConversionError(f"camera {camera}: {pixels.dtype} frames fit neither JPEG nor PNG "
                              "(only 32FC1 streams are written raw)")
    jpeg_ok = pixels.dtype == np.uint8 and (pixels.ndim == 2 or pixels.shape[2] == 3)
    fmt = "jpeg" if prefer == "jpeg" and jpeg_ok else "png"
    return fmt, encode_image(pixels, fmt, JPEG_QUALITY)


def payloads(stream: ImageStream, prefer: str, pool: Executor) -> Iterator[Payload]:
    """The stream's frames in order as payloads, encoded a few frames ahead in `pool`."""
    raw = is_raw(stream)

    def one(index: int, frame: Frame) -> Payload:
        with frame_at(stream.name, index):
            return payload(frame, prefer, raw, stream.name)

    return in_order(stream, one, pool)
