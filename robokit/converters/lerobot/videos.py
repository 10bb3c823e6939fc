"""LeRobot camera videos of one episode: coded video's packets copied, else frames encoded; and the continuous
per-camera MP4 files episodes are remuxed into (a new file where codec headers change)."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from robokit.converters.lerobot.depth import DepthVideoEncoder, depth_stats
from robokit.converters.lerobot.layout import MAX_VIDEO_SECONDS, VIDEO_PATH, FileCounter
from robokit.converters.stats import ImageStats
from robokit.converters.video import VideoConcatenator, VideoEncoder, VideoSettings
from robokit.converters.videocopy import copy_mp4, copyable
from robokit.timeline import ImageStream

STATS_SAMPLES = 100  # frames per episode fed to the image statistics
LEROBOT_CODECS = ("h264", "hevc", "av1")  # coded video LeRobot decodes, so copied as it is


@dataclass
class Video:
    """One camera of one episode: an MP4 with pts from frame 0, its frame count and image statistics."""

    mp4: bytes
    frames: int
    stats: ImageStats
    depth: bool = False  # a depth map: quantized 12-bit millimetres (`lerobot.depth`)
    clipped: int = 0  # depth pixels beyond the quantizer's maximum, stored as that maximum
    copied_gop: int = 0  # packets copied from coded video: its longest keyframe interval (else 0: encoded here)
    note: str = ""  # why coded video was re-encoded rather than copied


def camera_video(cam: str, stream: ImageStream, n_frames: int, fps: int, settings: VideoSettings,
                 asked: str | None) -> Video:
    """One camera of one episode: coded video's packets copied when nothing needs pixels (and no other codec is
    `asked` for), else encoded with `settings`."""
    coded, why = copyable(stream, LEROBOT_CODECS)
    if coded is not None and asked is not None and asked != coded.codec:
        why = f"codec {asked} asked for (the recording is {coded.codec})"
        coded = None
    if coded is None:
        video = encode_video(stream, n_frames, fps, settings)
        video.note = f"{cam}: coded video re-encoded, not copied: {why}" if why else ""
        return video
    copied = copy_mp4(coded, stream.positions.tolist(), stream.width, stream.height, fps)
    return Video(copied.mp4, copied.frames, copied.stats, copied_gop=copied.gop)


def encode_video(stream: ImageStream, n_frames: int, fps: int, settings: VideoSettings) -> Video:
    """One camera of one episode as an in-memory MP4, with statistics of about `STATS_SAMPLES` frames."""
    buffer = io.BytesIO()
    depth = stream.is_depth  # frames in uint16 millimetres (prepare)
    encoder = (DepthVideoEncoder(buffer, stream.width, stream.height, fps, settings.gop) if depth
               else VideoEncoder(buffer, stream.width, stream.height, fps, settings))
    stats = depth_stats() if depth else ImageStats()
    stride = max(1, n_frames // STATS_SAMPLES)
    try:
        for i, frame in enumerate(stream.frames()):
            pixels = frame.array()
            encoder.add(pixels)
            if i % stride == 0:
                stats.add(pixels if pixels.dtype == np.uint8 or depth else np.zeros((1, 1, 3), np.uint8))
    finally:
        encoder.close()
    return Video(buffer.getvalue(), encoder.frames, stats, depth, getattr(encoder, "clipped", 0))


class CameraFiles:
    """One camera's continuous MP4 files: episodes remuxed in order, rolled over by size and by duration."""

    def __init__(self, root: Path, key: str, fps: int, max_bytes: float) -> None:
        self.root = root
        self.key = key
        self.fps = fps
        self.max_bytes = max_bytes
        self.counter = FileCounter()
        self.first_file: Path | None = None
        self._out: VideoConcatenator | None = None

    def add(self, video: Video) -> dict[str, Any]:
        """Append one episode's MP4; returns where it went (the episodes table's `videos/<key>/*` columns)."""
        out = self._out
        if out is not None and (out.frames / self.fps + video.frames / self.fps > MAX_VIDEO_SECONDS
                                or out.size >= self.max_bytes or not out.fits(video.mp4)):
            self.close()
            self.counter.advance()
        if self._out is None:
            path = self.root / self.counter.path(VIDEO_PATH, video_key=self.key)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._out = VideoConcatenator(path, self.fps)
            self.first_file = self.first_file or path
        start, end = self._out.append(video.mp4)
        prefix = f"videos/{self.key}/"
        return {prefix + "chunk_index": self.counter.chunk, prefix + "file_index": self.counter.file,
                prefix + "from_timestamp": start / self.fps, prefix + "to_timestamp": end / self.fps}

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None
