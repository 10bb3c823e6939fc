"""LeRobot camera videos of one episode: coded video's packets copied, else frames encoded; and the continuous
per-camera MP4 files episodes are remuxed into (a new file where codec headers change)."""

from __future__ import annotations

import io
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from robokit import heap
from robokit.converters.lerobot.depth import DepthVideoEncoder, depth_stats
from robokit.converters.lerobot.layout import MAX_VIDEO_SECONDS, VIDEO_PATH, FileCounter
from robokit.converters.mp4 import VideoConcatenator, read_track
from robokit.converters.spill import Payload, spilling
from robokit.converters.stats import ImageStats
from robokit.converters.video import EncodeBatch, VideoEncoder, VideoSettings, encoder_slots
from robokit.converters.videocopy import copy_mp4, copyable
from robokit.timeline import ImageStream
from robokit.timeline.images import frame_at
from robokit.timeline.video import CodedVideo

STATS_SAMPLES = 100  # frames per episode fed to the image statistics
SEGMENT_FRAMES = 150  # frames per encoder (rounded up to whole GOPs): a camera is cut into segments encoded in
# parallel, each bounded in memory; an encoder's start costs about as much as a frame
LEROBOT_CODECS = ("h264", "hevc", "av1")  # coded video LeRobot decodes, so copied as it is


@dataclass
class Video:
    """One camera of one episode: MP4 parts with pts from frame 0 (remuxed one after another, in order; in
    memory or spill files), its frame count and image statistics."""

    parts: tuple[Payload, ...]
    frames: int
    stats: ImageStats
    depth: bool = False  # a depth map: quantized 12-bit millimetres (`lerobot.depth`)
    clipped: int = 0  # depth pixels beyond the quantizer's maximum, stored as that maximum
    copied_gop: int = 0  # packets copied from coded video: its longest keyframe interval (else 0: encoded here)
    note: str = ""  # why coded video was re-encoded rather than copied, or what its copy could not check


def segments(n_frames: int, gop: int) -> list[tuple[int, int]]:
    """The [start, end) frame ranges one camera of an episode is encoded in, each by its own encoder: GOP-aligned,
    so every keyframe lies where one encoder would put it and the parts remux into one stream; a function of the
    length alone, so the bytes do not depend on the machine."""
    size = -(-SEGMENT_FRAMES // max(1, gop)) * max(1, gop)
    return [(start, min(start + size, n_frames)) for start in range(0, n_frames, size)] or [(0, 0)]


def episode_videos(cameras: Mapping[str, ImageStream], fps: int, settings: VideoSettings, asked: str | None,
                   spill: Path | None = None, concurrent: int = 1, order: int = 0) -> dict[str, Video]:
    """Every camera of one episode: coded video's packets copied when nothing needs pixels (and no other codec is
    `asked` for), the rest encoded as `segments` on this process's encoder threads, the largest first so that the
    cores finish together, then by start (cameras interleave in time). Parts go to files in `spill` as made.
    `concurrent`: episodes this process encodes at once; `order`: the episode's place in the export (earlier
    episodes' segments are encoded first)."""
    copies: dict[str, CodedVideo] = {}
    notes: dict[str, str] = {}
    for cam, stream in cameras.items():
        coded, why = copyable(stream, LEROBOT_CODECS)
        if coded is not None and asked is not None and asked != coded.codec:
            why, coded = f"codec {asked} asked for (the recording is {coded.codec})", None
        if coded is None:
            notes[cam] = f"{cam}: coded video re-encoded, not copied: {why}" if why else ""
        else:
            copies[cam] = coded
    units = sorted(((cam, *span) for cam in notes for span in segments(len(cameras[cam]), settings.gop)),
                   key=lambda u: (-cameras[u[0]].width * cameras[u[0]].height * (u[2] - u[1]), u[1]))
    # One encoder thread when the encoders fill the cores (SVT-AV1's own pools cost CPU and memory, and its output
    # is the same with any), and always for libx264, whose output depends on its thread count.
    if settings.codec == "h264" or len(units) * concurrent >= encoder_slots():
        settings = replace(settings, threads=1)
    if units:
        heap.trim()  # what building the episode's table freed (it grows with the episode), before the encoders start
    # One count per camera, shared by its segments: per-segment histograms (512 KiB each for depth) would be held
    # until the last segment ends, and scattered among the encoders' freed buffers.
    stats = {cam: depth_stats() if cameras[cam].is_depth else ImageStats() for cam in notes}
    with ThreadPoolExecutor(max_workers=max(1, len(copies))) as pool:
        kept = _Kept(spill)
        batch = EncodeBatch(order, [(_encoded, (cameras[cam], start, end, fps, settings, kept, stats[cam]))
                                    for cam, start, end in units])
        try:
            copied = {cam: pool.submit(_copied, cam, coded, cameras[cam], fps, kept) for cam, coded in copies.items()}
            videos = {cam: future.result() for cam, future in copied.items()}
            encoded = sorted(zip(units, batch.results(), strict=True), key=lambda done: done[0])
            for cam, note in notes.items():
                videos[cam] = _joined([video for unit, video in encoded if unit[0] == cam], stats[cam], note)
        except BaseException:  # the episode has failed: its segments not yet started never will, the rest end
            batch.stop()
            pool.shutdown(cancel_futures=True)
            raise
    return {cam: videos[cam] for cam in cameras}


def _copied(cam: str, coded: CodedVideo, stream: ImageStream, fps: int, kept: _Kept) -> Video:
    copied = copy_mp4(coded, stream.positions.tolist(), fps, kept.keep)
    damaged = (f"{cam}: {copied.damaged} sampled keyframe(s) do not decode (damaged packets?); the packets were "
               "copied as recorded") if copied.damaged else ""
    return Video(copied.parts, copied.frames, copied.stats, copied_gop=copied.gop, note=damaged)


def _encoded(stream: ImageStream, start: int, end: int, fps: int, settings: VideoSettings, kept: _Kept,
             stats: ImageStats) -> Video:
    """Frames [start, end) of one camera as an in-memory MP4; its frames among the camera's `STATS_SAMPLES`
    (the same frames however it is cut) are counted into the camera's `stats`."""
    buffer = io.BytesIO()
    depth = stream.is_depth  # frames in uint16 millimetres (prepare)
    stride = max(1, len(stream) // STATS_SAMPLES)
    encoder = (DepthVideoEncoder(buffer, stream.width, stream.height, fps, settings.gop) if depth
               else VideoEncoder(buffer, stream.width, stream.height, fps, settings))
    try:
        for i, frame in enumerate(stream.frames(range(start, end)), start):
            with frame_at(stream.name, i):
                pixels = frame.array()
            encoder.add(pixels)
            if i % stride == 0:
                with kept.lock:  # integer counts: the sum is the same in any order
                    stats.add(pixels if pixels.dtype == np.uint8 or depth else np.zeros((1, 1, 3), np.uint8))
    finally:
        encoder.close()
    return Video((kept.keep(buffer.getvalue()),), encoder.frames, stats, depth, getattr(encoder, "clipped", 0))


class _Kept:
    """Where an episode's encoded parts wait for the assembler: each in a file in `spill` once encoded (in memory
    without one): an episode holds no more of them in memory however long it is, not even up to a bound (a 15 s
    episode's video is about 1 MiB, which a longer one held in memory while encoding the rest). Its lock guards
    the cameras' statistics, which the segments count into."""

    def __init__(self, spill: Path | None) -> None:
        self.spill = spill
        self.lock = threading.Lock()

    def keep(self, mp4: bytes) -> Payload:
        if self.spill is None:
            return Payload(len(mp4), data=mp4)
        with spilling(self.spill, limit=0) as part:
            part.file.write(mp4)
            return part.payload()


def _joined(parts: list[Video], stats: ImageStats, note: str) -> Video:
    """One camera's segments as one Video (their MP4s remuxed in order later), with the camera's `stats`."""
    return Video(tuple(mp4 for part in parts for mp4 in part.parts), sum(part.frames for part in parts), stats,
                 parts[0].depth, sum(part.clipped for part in parts), note=note)


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
        first = read_track(_source(video.parts[0]))  # read once: whether it fits, then where its samples are
        if out is not None and (out.frames / self.fps + video.frames / self.fps > MAX_VIDEO_SECONDS
                                or out.size >= self.max_bytes or not out.fits(first)):
            self.close()
            self.counter.advance()
        if self._out is None:
            path = self.root / self.counter.path(VIDEO_PATH, video_key=self.key)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._out = VideoConcatenator(path, self.fps)
            self.first_file = self.first_file or path
        start = self._out.frames
        for i, part in enumerate(video.parts):
            self._out.append(_source(part), None if i else first)
            if part.path is not None:
                part.path.unlink()
        prefix = f"videos/{self.key}/"
        return {prefix + "chunk_index": self.counter.chunk, prefix + "file_index": self.counter.file,
                prefix + "from_timestamp": start / self.fps, prefix + "to_timestamp": self._out.frames / self.fps}

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None


def _source(part: Payload) -> bytes | Path:
    """An encoded part as `VideoConcatenator` reads it: its bytes, or its spill file."""
    return part.path if part.path is not None else part.data
