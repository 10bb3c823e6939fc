"""Clips of a camera's media: cut by stream copy from encoded video, encoded (H.264, no B-frames) otherwise.

A copied clip starts at the last keyframe at or before the span's start (up to one GOP early) and its
packets are the source's, byte for byte; its true start is returned. Frames of a recording, or any media
when a clip rate or size is asked for, are resampled to a constant rate (nearest frame) and encoded once.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from robokit.converters.reasoning.scene import Media
from robokit.converters.video import VideoEncoder, VideoSettings
from robokit.errors import ConversionError
from robokit.timeline.video import frame_array

H264 = VideoSettings(codec="h264", crf=23, gop=30)
MAX_CLIP_FPS = 120


@dataclass(frozen=True)
class ClipResult:
    """A written clip: where it truly starts and ends (seconds on the media's clock), its frames, and how."""

    start: float
    end: float
    frames: int
    copied: bool


def write_clip(media: Media, start: float, end: float, out: Path, fps: int | None = None,
               size: tuple[int, int] | None = None) -> ClipResult:
    """The clip of `media` from `start` to `end` (seconds from the media's start) written to `out`."""
    try:
        if media.path is not None and media.copyable and fps is None and size is None:
            shift = media.offset_s
            copied = copy_clip(media.path, start + shift, end + shift, out)
            return replace(copied, start=copied.start - shift, end=copied.end - shift)
        if media.stream is not None:
            return _encode(_stream_frames(media, start, end), start, end, out, fps, size)
        assert media.path is not None, "media is a video file or a recording's camera"
        return _encode(_video_frames(media.path, start, end), start, end, out, fps, size)
    except ConversionError:
        raise
    except Exception as exc:  # PyAV/FFmpeg and decoder errors of one damaged medium: that clip only
        out.unlink(missing_ok=True)
        raise ConversionError(f"{media.source}: clip {start:g}-{end:g} s failed ({type(exc).__name__}: {exc})") from exc


def copy_clip(src: Path, start: float, end: float, out: Path) -> ClipResult:
    """Stream-copy the packets from the last keyframe at or before `start` up to `end` (decode order)."""
    import av

    with av.open(str(src)) as container:
        stream = container.streams.video[0]
        tb = stream.time_base
        assert tb is not None, "a demuxed video stream has a time base"
        base = stream.start_time or 0
        start_pts, end_pts = base + math.floor(start / tb), base + math.ceil(end / tb)
        container.seek(start_pts, stream=stream, backward=True, any_frame=False)
        gop: list[Any] = []  # packets from the latest keyframe at or before start, until the choice is sure
        writer: _PacketWriter | None = None
        packets: Any = container.demux(stream)
        for packet in packets:
            if packet.dts is None or not packet.size:
                continue
            if packet.dts >= end_pts and (gop or writer):
                break
            if writer is not None:
                writer.add(packet)
            elif packet.is_keyframe and (packet.pts <= start_pts or not gop):
                gop = [packet]
            elif packet.is_keyframe or not gop:  # a keyframe after start: the clip starts with the gop held
                if gop:
                    writer = _PacketWriter(out, stream, gop)
                    writer.add(packet)
            else:
                gop.append(packet)
        if writer is None:
            if not gop:
                raise ConversionError(f"{src.name}: no keyframe before {end:g} s; cannot cut a clip")
            writer = _PacketWriter(out, stream, gop)
        writer.close()
        first = float((writer.first_pts - base) * tb)
        return ClipResult(first, float((writer.last_pts - base) * tb), writer.frames, copied=True)


class _PacketWriter:
    """An MP4 receiving a source stream's packets unchanged, shifted so the first decodes at time 0."""

    def __init__(self, out: Path, template: Any, first: list[Any]) -> None:
        import av

        self._container: Any = av.open(str(out), mode="w", format="mp4")
        self._stream = self._container.add_stream_from_template(template, opaque=True)
        self._shift = first[0].dts
        self.first_pts: int = first[0].pts
        self.last_pts: int = first[0].pts
        self.frames = 0
        for packet in first:
            self.add(packet)

    def add(self, packet: Any) -> None:
        self.last_pts = max(self.last_pts, packet.pts + (packet.duration or 0))
        packet.pts -= self._shift
        packet.dts -= self._shift
        packet.stream = self._stream
        self._container.mux(packet)
        self.frames += 1

    def close(self) -> None:
        self._container.close()


# --- encoding -----------------------------------------------------------------------------------------------

Timed = tuple[float, Any]  # (seconds from the media's start, a frame: av.VideoFrame or an RGB array)


def _video_frames(src: Path, start: float, end: float) -> Iterator[Timed]:
    """Decoded frames of a video from the keyframe before `start` to `end`, with their times."""
    import av

    with av.open(str(src)) as container:
        stream = container.streams.video[0]
        tb = stream.time_base
        assert tb is not None, "a demuxed video stream has a time base"
        base = stream.start_time or 0
        container.seek(base + math.floor(start / tb), stream=stream, backward=True, any_frame=False)
        for frame in container.decode(stream):
            if frame.pts is None:
                continue
            t = float((frame.pts - base) * tb)
            if t >= end:
                return
            yield t, frame


def _stream_frames(media: Media, start: float, end: float) -> Iterator[Timed]:
    """Frames of a recording's camera from the last one at or before `start` to `end`, with their times."""
    stream = media.stream
    assert stream is not None, "recording media carry their stream"
    times = (stream.timestamps - stream.start_ns) / 1e9
    first = max(int(np.searchsorted(times, start, side="right")) - 1, 0)
    stop = int(np.searchsorted(times, end, side="left"))
    indices = list(range(first, max(stop, first + 1)))
    for t, frame in zip(times[indices], stream.frames(indices), strict=True):
        yield float(t), frame.array()


def _nominal_rate(media_frames: list[Timed]) -> int:
    if len(media_frames) < 2:
        return 1
    span = media_frames[-1][0] - media_frames[0][0]
    return max(1, min(MAX_CLIP_FPS, round((len(media_frames) - 1) / span))) if span > 0 else 1


def _encode(frames: Iterator[Timed], start: float, end: float, out: Path, fps: int | None,
            size: tuple[int, int] | None) -> ClipResult:
    """Resample `frames` to a constant rate over [start, end) (nearest frame) and encode them to H.264."""
    held = _Window(frames)
    rate = fps or _nominal_rate(held.peek(64))
    ticks = max(1, math.floor((end - start) * rate + 1e-9))
    encoder: VideoEncoder | None = None
    try:
        for k in range(ticks):
            pixels = _rgb(held.nearest(start + k / rate))
            if encoder is None:
                h, w = pixels.shape[:2]
                width, height = size or (w - w % 2, h - h % 2)
                if width < 2 or height < 2:
                    raise ConversionError(f"{w}x{h} frames are too small for a video")
                encoder = VideoEncoder(out, width, height, rate, H264)
                target = (width, height)
            if (pixels.shape[1], pixels.shape[0]) != target:
                pixels = _resize(pixels, target)
            encoder.add(pixels)
    finally:
        if encoder is not None:
            encoder.close()
    return ClipResult(start, start + ticks / rate, ticks, copied=False)


class _Window:
    """Timed frames consumed in order, answering "the frame nearest to t" for increasing t."""

    def __init__(self, frames: Iterator[Timed]) -> None:
        self._it = frames
        self._ahead: list[Timed] = []
        self._prev: Timed | None = None

    def peek(self, n: int) -> list[Timed]:
        while len(self._ahead) < n and (nxt := next(self._it, None)) is not None:
            self._ahead.append(nxt)
        return self._ahead[:n]

    def nearest(self, t: float) -> Any:
        while self.peek(1) and self._ahead[0][0] <= t:
            self._prev = self._ahead.pop(0)
        nxt = self.peek(1)
        candidates = [c for c in (self._prev, nxt[0] if nxt else None) if c is not None]
        if not candidates:
            raise ConversionError(f"no frame near {t:g} s")
        return min(candidates, key=lambda c: abs(c[0] - t))[1]


def _rgb(frame: Any) -> np.ndarray:
    if isinstance(frame, np.ndarray):
        pixels = frame
        if pixels.dtype != np.uint8:
            raise ConversionError(f"{pixels.dtype} frames are not colour video")
        return pixels
    return frame_array(frame, "rgb24")


def _resize(pixels: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.fromarray(pixels).resize(size, Image.Resampling.BILINEAR))

