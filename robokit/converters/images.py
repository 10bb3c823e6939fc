"""Camera frames as encoded JPEG/PNG bytes for writers that store images per step (RLDS, WebDataset).

Recorded JPEG/PNG bytes pass through untouched when the chosen format matches. With `auto`, frames decoded
from a lossy source (a video such as LeRobot's MP4s) become JPEG: PNG would only store the codec's artefacts
losslessly, many times larger; raw (lossless) frames become PNG. Every frame's shape is
checked against the camera's first frame (from the image header, without decoding), so a stream whose
size changes fails with a clear message instead of producing a dataset its consumers reject. Frames are read in
order and encoded a few ahead in threads (Pillow releases the GIL while it encodes), as MCAP's are.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from robokit.converters.prepare import PreparedEpisode
from robokit.converters.registry import ExtraOption
from robokit.errors import ConversionError
from robokit.timeline import Frame, ImageStream
from robokit.timeline.images import frame_at
from robokit.timeline.streams import ints
from robokit.timeline.video import DECODERS

T = TypeVar("T")
IMAGE_THREADS = min(4, os.cpu_count() or 1)  # threads encoding one stream's frames
AHEAD = 4  # frames submitted ahead of the one being written: every thread busy, a few frames in memory
IMAGE_FORMATS = ("auto", "jpeg", "png")
IMAGE_FORMAT = ExtraOption("image_format", str, "auto", "Image encoding: auto keeps recorded JPEG/PNG, frames "
                           "decoded from video (lossy) become JPEG, raw frames PNG.", IMAGE_FORMATS)
JPEG_QUALITY = ExtraOption("jpeg_quality", int, 95, "JPEG quality when frames are encoded to JPEG.", low=1, high=100)
IMAGE_OPTIONS = (IMAGE_FORMAT, JPEG_QUALITY)  # shared by the writers that store encoded frames
EXTENSIONS = {"jpeg": "jpg", "png": "png"}
VIDEO = "video"  # the recorded format of frames decoded from a (lossy) video stream
# PIL mode -> (channels, dtype) of what Frame.array() returns for it
_MODES = {"1": (1, "uint8"), "L": (1, "uint8"), "P": (3, "uint8"), "RGB": (3, "uint8"), "YCbCr": (3, "uint8"),
          "CMYK": (3, "uint8"), "LA": (3, "uint8"), "RGBA": (4, "uint8"), "I;16": (1, "uint16"),
          "I;16B": (1, "uint16"), "I;16L": (1, "uint16")}


def camera_key(channel: str) -> str:
    """A camera's feature name: `front/rgb` → `front`, other fields keep theirs (`front/depth` → `front_depth`)."""
    group, _, kind = channel.partition("/")
    return (group if kind in ("rgb", "") else f"{group}_{kind}").replace("/", "_").replace(".", "_")


@dataclass(frozen=True)
class ImageSpec:
    """What every frame of one camera must be: height, width, channels, dtype, and the stored format."""

    height: int
    width: int
    channels: int
    dtype: str
    format: str

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.height, self.width, self.channels)

    @property
    def extension(self) -> str:
        return EXTENSIONS[self.format]


def frame_layout(frame: Frame) -> tuple[int, int, int, str]:
    """(height, width, channels, dtype) of a frame; encoded frames are read from their header only."""
    if frame.pixels is not None or frame.data is None:
        pixels = frame.array()
        channels = 1 if pixels.ndim == 2 else int(pixels.shape[2])
        return int(pixels.shape[0]), int(pixels.shape[1]), channels, str(pixels.dtype)
    with frame.opened() as im:
        channels, dtype = _MODES.get(im.mode, (3, "uint8"))
        return im.height, im.width, channels, dtype


def recorded_format(stream: ImageStream) -> str:
    """How a camera was recorded: `jpeg`/`png` bytes, `video` when its frames are decoded from a video, else raw."""
    if stream.format in EXTENSIONS:
        return stream.format
    msgtype = stream.origin.msgtype if stream.origin is not None else ""
    coded = stream.format in DECODERS or msgtype.endswith("/video") or "CompressedVideo" in msgtype
    return VIDEO if coded else stream.format


def image_spec(name: str, first: Frame, recorded_format: str, requested: str) -> ImageSpec:
    """The spec of a camera from its first frame: `auto` keeps a recorded JPEG/PNG, makes frames decoded from a
    (lossy) video JPEG and anything else PNG (lossless).

    JPEG cannot hold 16-bit or 4-channel images, so those become PNG; float images (32FC1 depth) are refused.
    """
    height, width, channels, dtype = frame_layout(first)
    if dtype not in ("uint8", "uint16"):
        raise ConversionError(f"camera {name}: {dtype} images cannot be stored as JPEG/PNG; "
                              "leave the camera out with `cameras`")
    fmt = requested
    if requested == "auto":
        fmt = "jpeg" if recorded_format == VIDEO else recorded_format
    if fmt not in EXTENSIONS or dtype == "uint16" or channels == 4:
        fmt = "png"
    return ImageSpec(height, width, channels, dtype, fmt)


def camera_specs(p: PreparedEpisode, requested: str) -> dict[str, tuple[str, ImageSpec]]:
    """channel → (feature name, spec) of every camera of a dataset's first episode, in name order."""
    specs = {}
    for channel, stream in sorted(p.cameras.items()):
        recorded = p.episode.streams[channel]  # before any resize: its stored format
        fmt = recorded_format(recorded) if isinstance(recorded, ImageStream) else "raw"
        specs[channel] = (camera_key(channel), image_spec(channel, first_frame(stream), fmt, requested))
    return specs


def in_order(stream: ImageStream, encode: Callable[[int, Frame], T], pool: Executor) -> Iterator[T]:
    """`encode(index, frame)` of each frame of `stream`, in order, run in `pool` up to `AHEAD` frames ahead; a
    frame repeated by resampling (the same position again) is encoded once."""
    pending: deque[Future[T]] = deque()
    last: tuple[int, Future[T]] | None = None
    for index, (position, frame) in enumerate(zip(ints(stream.positions), stream.frames(), strict=True)):
        if last is None or last[0] != position:
            last = (position, pool.submit(encode, index, frame))
        pending.append(last[1])
        if len(pending) > AHEAD:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def encoded_frames(name: str, stream: ImageStream, spec: ImageSpec, quality: int = 95) -> Iterator[bytes]:
    """Each frame of `stream` as bytes in `spec.format`; ConversionError when a frame's shape differs, SourceError
    (naming the frame) when it does not decode or its recorded bytes end early."""

    def encode(index: int, frame: Frame) -> bytes:
        with frame_at(name, index):
            layout = frame_layout(frame)
            if layout != (spec.height, spec.width, spec.channels, spec.dtype):
                h, w, c, dtype = layout
                raise ConversionError(
                    f"camera {name}: frame {index} is {w}x{h}x{c} {dtype}, its first frame in this dataset was "
                    f"{spec.width}x{spec.height}x{spec.channels} {spec.dtype}; pass image_size to resize every frame")
            return frame.encoded(spec.format, quality)

    with ThreadPoolExecutor(max_workers=IMAGE_THREADS, thread_name_prefix="robokit-images") as pool:
        yield from in_order(stream, encode, pool)


def first_frame(stream: ImageStream) -> Frame:
    """The first frame of a stream (decoding at most that one)."""
    if len(stream) == 0:
        raise ConversionError(f"camera {stream.name}: no frames")
    return next(iter(stream.frames([0])))

