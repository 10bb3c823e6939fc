"""Coded video copied instead of re-encoded: whether a camera's packets can be copied, and the copy.

A camera is copied when its frames come as coded video (a CompressedVideo/FFMPEGPacket recording, a
LeRobot MP4), are neither resized nor put on another rate (each frame taken once, in order), start on a
keyframe and have no B-frames. Copied packets are Annex B (H.264/H.265) or OBUs (AV1) with parameter
sets on keyframes; the MP4 muxer turns them into MP4 samples. Otherwise writers decode and re-encode,
and say why.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Any

import av
import numpy as np
from av.bitstream import BitStreamFilterContext

from robokit.converters.spill import Payload
from robokit.converters.stats import ImageStats
from robokit.errors import SourceError
from robokit.timeline import FrameSource, ImageStream
from robokit.timeline.images import MappedFrameSource
from robokit.timeline.video import (
    CodedVideo,
    Packet,
    VideoFrames,
    decode_packet,
    decoder,
    frame_array,
    has_sequence_header,
)

STATS_SAMPLES = 100  # keyframes decoded per copied episode for the image statistics
ELEMENTARY_FORMATS = {"h264": "h264", "hevc": "hevc", "av1": "obu"}  # FFmpeg's demuxer of each codec's bare stream
TEMPORAL_DELIMITER = b"\x12\x00"  # an AV1 temporal delimiter OBU (type 2, with a size field of 0)
_ANNEXB = {"h264": "h264_mp4toannexb", "hevc": "hevc_mp4toannexb"}


def coded(source: FrameSource | None) -> CodedVideo | None:
    """The coded packets behind a frame source, when it has them (resized frames have none)."""
    if isinstance(source, VideoFrames):
        return source
    encoded: tuple[Path, float] | None = getattr(source, "encoded_video", None)
    return Mp4Video(*encoded) if encoded is not None else None


def copyable(stream: ImageStream, codecs: Sequence[str]) -> tuple[CodedVideo | None, str]:
    """(the packets to copy, "") when the stream's frames can be copied into a `codecs` target, else (None, why);
    why is "" when the frames never were coded video (nothing to tell)."""
    source = stream.source
    if isinstance(source, MappedFrameSource):
        return None, "frames are resized" if coded(source.base) is not None else ""
    video = coded(source)
    if video is None:
        return None, ""
    if video.codec not in codecs:
        return None, f"{video.codec} video is not one of {', '.join(codecs)}"
    positions = stream.positions
    if len(positions) > 1 and not bool(np.all(np.diff(positions) == 1)):
        return None, "the frame rate changes (frames are repeated or skipped to fit the fps)"
    problem = video.copy_problem(positions.tolist())
    return (None, problem) if problem else (video, "")


@dataclass
class CopiedVideo:
    """One camera's packets remuxed into MP4 parts (each with pts = its frame number at 1/fps, joined in order by
    `mp4.VideoConcatenator`) and what describes the stream."""

    parts: tuple[Payload, ...]
    frames: int
    stats: ImageStats
    codec: str
    gop: int  # the longest keyframe interval, in frames
    damaged: int = 0  # sampled keyframes that did not decode (copied as recorded all the same)


def copy_mp4(video: CodedVideo, positions: Sequence[int], fps: int, keep: Callable[[bytes], Payload]) -> CopiedVideo:
    """Remux the packets at `positions` into MP4 parts of about `PART_BYTES`, each cut before a keyframe and handed to
    `keep` as it is made (an episode's copy is never whole in memory); image statistics from about STATS_SAMPLES
    keyframes, each decoded on its own."""
    stride = max(1, len(positions) // STATS_SAMPLES)
    stats, keys = ImageStats(), _KeyframeDecoder(video.codec)
    frames, last_key, gop = 0, 0, 1
    packets = video.packets(positions)
    first = next(packets, None)
    if first is None:
        raise SourceError(f"{video.codec} video: no packets to copy")
    parts: list[Payload] = []
    with _elementary(video.codec, first.data) as template:
        part = _Part(template.streams.video[0], fps)
        for i, packet in enumerate(itertools.chain([first], packets)):
            if packet.keyframe:
                if part.size >= PART_BYTES:
                    parts.append(keep(part.close()))
                    part = _Part(template.streams.video[0], fps)
                gop, last_key = max(gop, i - last_key), i
                if i >= keys.sent * stride:
                    keys.add(packet.data, stats)
            part.add(packet)
            frames += 1
        parts.append(keep(part.close()))
        keys.finish(stats)
    if not stats.frames:
        raise SourceError(f"{video.codec} video: none of its keyframes decodes (damaged packets)")
    return CopiedVideo(tuple(parts), frames, stats, video.codec, max(gop, frames - last_key), keys.damaged)


PART_BYTES = 1 << 20  # packet bytes in a copy's MP4 part (more only up to the next keyframe)


class _Part:
    """One in-memory MP4 of copied packets, pts = frame number from 0."""

    def __init__(self, template: Any, fps: int) -> None:
        self.size = 0
        self.frames = 0
        self._buffer = io.BytesIO()
        self._container: Any = av.open(self._buffer, mode="w", format="mp4")
        self._stream: Any = self._container.add_stream_from_template(template, opaque=True)
        self._stream.time_base = self._time_base = Fraction(1, fps)

    def add(self, packet: Packet) -> None:
        out = av.Packet(packet.data)
        out.pts = out.dts = self.frames
        out.duration = 1
        out.is_keyframe = packet.keyframe
        out.stream, out.time_base = self._stream, self._time_base
        self._container.mux(out)
        self.size += len(packet.data)
        self.frames += 1

    def close(self) -> bytes:
        self._container.close()
        return self._buffer.getvalue()


def _elementary(codec: str, keyframe: bytes) -> Any:
    """The first keyframe (Annex B / OBUs with parameter sets) opened by FFmpeg's own elementary-stream demuxer:
    the template of the copy's stream, whose codec parameters (avcC, hvcC, av1C) come from the recorded bytes.
    One way for every PyAV version (`add_mux_stream` needs PyAV 16; lerobot 0.6 pins 15)."""
    if codec == "av1" and not keyframe.startswith(TEMPORAL_DELIMITER):
        keyframe = TEMPORAL_DELIMITER + keyframe  # the OBU stream demuxer reads a temporal unit from one
    try:
        return av.open(io.BytesIO(keyframe), format=ELEMENTARY_FORMATS[codec])
    except (av.error.FFmpegError, IndexError) as err:
        raise SourceError(f"{codec} video: its first keyframe does not parse ({err})") from err


class _KeyframeDecoder:
    """Decodes keyframes alone (each decodes without the frames between) into image statistics; a damaged one is
    counted and left out of them (its packet is still copied as recorded). Errors are not concealed here
    (`err_detect=explode`), so a truncated keyframe is noticed rather than decoded into grey."""

    def __init__(self, codec: str) -> None:
        self._codec = codec
        self._ctx = self._fresh()
        self.sent = 0
        self.damaged = 0

    def add(self, data: bytes | None, stats: ImageStats) -> None:
        self.sent += data is not None
        try:
            for frame in decode_packet(self._ctx, data, "keyframe"):
                stats.add(frame_array(frame, "rgb24"))
        except SourceError:
            self.damaged += 1
            self._ctx = self._fresh()

    def _fresh(self) -> Any:
        ctx = decoder(self._codec)
        ctx.options = {"err_detect": "explode"}
        return ctx

    def finish(self, stats: ImageStats) -> None:
        self.add(None, stats)


class Mp4Video:
    """The packets of a constant-frame-rate MP4 from `start` seconds on (a LeRobot episode): frame i of the
    episode is the one shown at start + i/fps; packets come out as Annex B / OBUs with parameter sets."""

    def __init__(self, path: Path, start: float) -> None:
        self.path = path
        self.start = start

    @cached_property
    def _facts(self) -> tuple[str, float, bytes]:
        try:
            with av.open(str(self.path)) as container:
                stream = container.streams.video[0]
                return (stream.codec_context.codec.canonical_name, float(stream.average_rate or 0),
                        bytes(stream.codec_context.extradata or b""))
        except (av.error.FFmpegError, IndexError) as err:
            raise SourceError(f"video file {self.path} cannot be read ({type(err).__name__}: {err})") from err

    @property
    def codec(self) -> str:
        return self._facts[0]

    def _demux(self, positions: Sequence[int]) -> Iterator[tuple[int, Any]]:
        """(frame number, packet) for the wanted positions (ascending), packets in decoding order."""
        _, fps, _ = self._facts
        wanted = set(int(p) for p in positions)
        last = max(wanted, default=-1)
        try:
            with av.open(str(self.path)) as container:
                stream: Any = container.streams.video[0]
                tb = float(stream.time_base)
                first = self.start + min(wanted, default=0) / fps
                container.seek(int(first / tb), stream=stream, backward=True, any_frame=False)
                for packet in container.demux(stream):
                    if not packet.size or packet.pts is None:
                        continue
                    index = round((packet.pts * tb - self.start) * fps)
                    if index in wanted:
                        yield index, packet
                    if index > last:
                        return
        except av.error.FFmpegError as err:
            raise SourceError(f"video file {self.path} cannot be read ({err})") from err

    def packets(self, positions: Sequence[int]) -> Iterator[Packet]:
        codec, _, extradata = self._facts
        bsf: Any = None
        for _, packet in self._demux(positions):
            key = bool(packet.is_keyframe)  # read first: the filter takes the packet's data and flags
            if bsf is None and codec in _ANNEXB:
                bsf = BitStreamFilterContext(_ANNEXB[codec], packet.stream)
            for out in bsf.filter(packet) if bsf is not None else [packet]:
                data = bytes(out)
                if codec == "av1" and key and not has_sequence_header(data):
                    data = extradata[4:] + data  # the av1C sequence header, carried in band
                yield Packet(data, key)

    def copy_problem(self, positions: Sequence[int]) -> str:
        """A start between keyframes, frames missing from the file, or decoding order ≠ display order (one pass
        over the packets, none of them kept)."""
        found, starts_on_key, in_order, last = 0, True, True, -1
        for index, packet in self._demux(positions):
            starts_on_key = starts_on_key and (found > 0 or bool(packet.is_keyframe))
            in_order, last, found = in_order and index >= last, index, found + 1
        if found != len(positions):
            return f"the video file holds {found} of the episode's {len(positions)} frames"
        if not starts_on_key:
            return "the episode starts between keyframes"
        if not in_order:
            return "the video has B-frames (frames decode out of display order)"
        return ""
