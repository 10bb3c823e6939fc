"""Lazy image frames: a frame decodes on access; encoded JPEG/PNG bytes are kept as they came."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from PIL import Image, UnidentifiedImageError

from robokit.errors import SourceError

ENCODED_FORMATS = ("jpeg", "png")
_JPEG_SCAN, _JPEG_END = b"\xff\xda", b"\xff\xd9"  # start-of-scan and end-of-image markers
_PNG_END = b"IEND\xaeB`\x82"  # the IEND chunk's type and CRC, a PNG's last bytes


@dataclass(frozen=True)
class Frame:
    """One image: either encoded bytes (`format` jpeg/png) or a decoded array (`format` raw)."""

    format: str
    data: bytes | None = None
    pixels: np.ndarray | None = None

    def array(self) -> np.ndarray:
        """The decoded image: (H, W, 3) uint8 RGB, (H, W, 4) RGBA, or (H, W) for mono and depth."""
        if self.pixels is not None:
            return self.pixels
        with self.opened() as im:
            if im.mode in ("P", "CMYK", "YCbCr", "LA"):
                return np.asarray(im.convert("RGB"))
            return np.asarray(im)

    @contextmanager
    def opened(self) -> Iterator[Image.Image]:
        """The encoded bytes opened with PIL; corrupt or truncated bytes raise SourceError (the recording's
        fault, so the episode is skipped, not the disk's)."""
        assert self.data is not None
        try:
            with Image.open(io.BytesIO(self.data)) as im:
                yield im
        except UnidentifiedImageError as err:
            raise SourceError(f"{self.format} image of {len(self.data)} bytes cannot be decoded "
                              "(not an image PIL can read)") from err
        except (OSError, ValueError) as err:
            raise SourceError(f"{self.format} image of {len(self.data)} bytes cannot be decoded ({err})") from err

    def recorded(self) -> bytes:
        """The encoded bytes as they came, once they hold the whole image: bytes ending early (a truncated JPEG or
        PNG) must decode, else SourceError as decoding raises; copied, they would fail only in the consumer."""
        assert self.data is not None
        if not _looks_whole(self.data, self.format):
            with self.opened() as im:
                im.load()
        return self.data

    def encoded(self, fmt: str = "png", quality: int = 95) -> bytes:
        """Encoded bytes in `fmt`; existing bytes pass through untouched (`recorded`) when they already are `fmt`."""
        if self.data is not None and self.format == fmt:
            return self.recorded()
        return encode_image(self.array(), fmt, quality)


def _looks_whole(data: bytes, fmt: str) -> bool:
    """Whether encoded bytes reach their image's end, in microseconds where decoding takes milliseconds: a JPEG's
    end-of-image marker after its last scan (coded data cannot hold one; a thumbnail's comes before the scans), a
    PNG's IEND chunk. False sends the frame to a decode, which decides."""
    if fmt == "jpeg":
        end = data.rfind(_JPEG_END)
        return end >= 0 and data.find(_JPEG_SCAN, 0, end) >= 0 and data.find(_JPEG_SCAN, end) < 0
    return fmt == "png" and _PNG_END in data[-64:]


@contextmanager
def frame_at(camera: str, index: int) -> Iterator[None]:
    """Names the camera and frame in a SourceError raised inside (decoding knows only the bytes)."""
    try:
        yield
    except SourceError as err:
        raise SourceError(f"camera {camera}: frame {index}: {err}") from err


def encode_image(pixels: np.ndarray, fmt: str = "png", quality: int = 95) -> bytes:
    """Encode an array as PNG (lossless; 16-bit mono kept) or JPEG."""
    buf = io.BytesIO()
    image = Image.fromarray(pixels)
    if fmt == "jpeg":
        image.save(buf, format="JPEG", quality=quality)
    elif fmt == "png":
        image.save(buf, format="PNG", compress_level=1)
    else:
        raise ValueError(f"unknown image format {fmt!r}; expected one of {ENCODED_FORMATS}")
    return buf.getvalue()


class FrameSource(Protocol):
    """Where an image stream's frames come from; positions index the source's own frame order."""

    def iter_frames(self, positions: Iterable[int]) -> Iterator[Frame]:
        """Yield the frames at `positions`, in that order (repeats allowed)."""
        ...


class ArrayFrameSource:
    """Frames held in memory (generated data, tests, small images)."""

    def __init__(self, frames: Sequence[Frame | np.ndarray]) -> None:
        self._frames = [f if isinstance(f, Frame) else Frame("raw", pixels=f) for f in frames]

    def __len__(self) -> int:
        return len(self._frames)

    def iter_frames(self, positions: Iterable[int]) -> Iterator[Frame]:
        for p in positions:
            yield self._frames[int(p)]


class MappedFrameSource:
    """Applies a per-frame function lazily on top of another source (e.g. a resize)."""

    def __init__(self, base: FrameSource, fn: Callable[[Frame], Frame]) -> None:
        self.base = base
        self._fn = fn

    def iter_frames(self, positions: Iterable[int]) -> Iterator[Frame]:
        for frame in self.base.iter_frames(positions):
            yield self._fn(frame)


def resize_frame(width: int, height: int) -> Callable[[Frame], Frame]:
    """A frame function resizing to width×height (bilinear for colour, nearest for depth)."""

    def fn(frame: Frame) -> Frame:
        pixels = frame.array()
        if pixels.shape[1] == width and pixels.shape[0] == height:
            return frame
        depth = pixels.ndim == 2 and pixels.dtype != np.uint8
        resample = Image.Resampling.NEAREST if depth else Image.Resampling.BILINEAR
        return Frame("raw", pixels=np.asarray(Image.fromarray(pixels).resize((width, height), resample)))

    return fn
