"""Constant-frame-rate MP4 encoding with PyAV: one continuous stream, frames fed one at a time."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av
import numpy as np

from robokit.errors import OptionError

# user-facing codec name -> (PyAV encoder, canonical decoder name as stored in metadata)
CODECS = {"av1": ("libsvtav1", "av1"), "h264": ("libx264", "h264")}


@dataclass(frozen=True)
class VideoSettings:
    """Encoder settings: codec (`av1` via libsvtav1, or `h264`), crf, GOP size, preset, pixel format."""

    codec: str = "av1"
    crf: int = 30
    gop: int = 2
    preset: int | str | None = None  # None: 12 for libsvtav1, "veryfast" for libx264
    pix_fmt: str = "yuv420p"
    threads: int = 0  # 0: let the encoder decide

    def __post_init__(self) -> None:
        if self.codec not in CODECS:
            raise OptionError(f"codec {self.codec!r}: expected one of {', '.join(CODECS)}")
        if not 0 <= self.crf <= 63:
            raise OptionError(f"crf {self.crf}: expected 0..63")
        if self.gop < 1:
            raise OptionError(f"gop {self.gop}: must be at least 1")

    @property
    def encoder(self) -> str:
        return CODECS[self.codec][0]

    @property
    def effective_preset(self) -> int | str:
        if self.preset is not None:
            return self.preset
        return 12 if self.encoder == "libsvtav1" else "veryfast"

    def options(self) -> dict[str, str]:
        opts = {"g": str(self.gop), "crf": str(self.crf), "preset": str(self.effective_preset)}
        if self.threads:
            key = "svtav1-params" if self.encoder == "libsvtav1" else "threads"
            opts[key] = f"lp={self.threads}" if self.encoder == "libsvtav1" else str(self.threads)
        return opts


class VideoEncoder:
    """Writes frames to one MP4 with pts = frame number and time base 1/fps (what LeRobot expects)."""

    def __init__(self, path: Path, width: int, height: int, fps: int, settings: VideoSettings) -> None:
        os.environ.setdefault("SVT_LOG", "1")  # SVT-AV1 prints its banner per stream otherwise
        self.path = path
        self.frames = 0
        self._container: Any = av.open(str(path), mode="w")
        stream: Any = self._container.add_stream(settings.encoder, rate=fps, options=settings.options())
        stream.width, stream.height, stream.pix_fmt = width, height, settings.pix_fmt
        self._stream: Any = stream

    def add(self, pixels: np.ndarray) -> None:
        """Encode one RGB uint8 (H, W, 3) frame (grey frames are expanded to RGB)."""
        if pixels.ndim == 2:
            pixels = np.repeat(pixels[:, :, None], 3, axis=2)
        elif pixels.shape[2] == 4:
            pixels = pixels[:, :, :3]
        frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(pixels, dtype=np.uint8), format="rgb24")
        frame.pts = self.frames
        for packet in self._stream.encode(frame):
            self._container.mux(packet)
        self.frames += 1

    def size(self) -> int:
        """Bytes written so far (approximate while the muxer buffers)."""
        return self.path.stat().st_size if self.path.exists() else 0

    def close(self) -> None:
        for packet in self._stream.encode(None):
            self._container.mux(packet)
        self._container.close()


def video_info(path: Path) -> dict[str, Any]:
    """Stream facts of a written file, as LeRobot's `info` block names them."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        return {
            "video.height": stream.codec_context.height,
            "video.width": stream.codec_context.width,
            "video.codec": stream.codec_context.codec.canonical_name,
            "video.pix_fmt": stream.codec_context.pix_fmt,
            "video.fps": round(float(stream.average_rate or stream.guessed_rate or 0)),
            "video.channels": 3,
            "has_audio": bool(container.streams.audio),
        }
