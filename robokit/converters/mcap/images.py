"""Camera frames as MCAP payloads: JPEG/PNG bytes passed through, raw frames encoded once in worker threads.

Frames are read in order on the calling thread and encoded a few ahead in a thread pool (Pillow releases
the GIL), so memory holds at most `AHEAD` frames per camera. A frame repeated by nearest-neighbour
resampling is encoded once.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from concurrent.futures import Executor, Future

import numpy as np

from robokit.errors import ConversionError
from robokit.timeline import Frame, ImageStream
from robokit.timeline.images import ENCODED_FORMATS, encode_image
from robokit.timeline.streams import ints

AHEAD = 4
JPEG_QUALITY = 90
RAW_ENCODINGS = ("32FC1", "16UC1")  # depth: written as raw images (foxglove.RawImage / sensor_msgs Image)
Payload = tuple[str, bytes | np.ndarray]  # (jpeg | png | raw, bytes or pixels)


def is_raw(stream: ImageStream) -> bool:
    """Whether the stream's frames are written uncompressed (RawImage / sensor_msgs Image)."""
    return stream.encoding in RAW_ENCODINGS


def payload(frame: Frame, prefer: str, raw: bool, camera: str) -> Payload:
    """The bytes to write: encoded frames as they are; raw ones as `prefer` when it fits the pixels, else PNG."""
    if frame.data is not None and frame.format in ENCODED_FORMATS and not raw:
        return frame.format, frame.data
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
    """The stream's frames in order as payloads, encoded up to AHEAD frames ahead."""
    raw = is_raw(stream)
    pending: deque[Future[Payload]] = deque()
    last: tuple[int, Future[Payload]] | None = None
    for position, frame in zip(ints(stream.positions), stream.frames(), strict=True):
        if last is None or last[0] != position:
            last = (position, pool.submit(payload, frame, prefer, raw, stream.name))
        pending.append(last[1])
        if len(pending) > AHEAD:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()
