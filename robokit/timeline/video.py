"""Coded video (H.264, H.265, AV1) as an image stream: packets kept as recorded, frames decoded on demand.

Packets are in Annex B (H.264/H.265) or low-overhead OBU (AV1) form, one coded frame each, keyframes
carrying their parameter sets, so writers can copy them. One decoder per stream: frames asked for in
order decode in one pass; a step back, or a jump past a keyframe, restarts at the keyframe before it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import av
import numpy as np

from robokit.errors import SourceError
from robokit.timeline.images import Frame, FrameSource

DECODERS = {"h264": "h264", "hevc": "hevc", "av1": "libdav1d"}  # codec → PyAV decoder


@dataclass(frozen=True)
class Packet:
    """One coded frame as recorded (Annex B / OBUs) and whether it decodes on its own."""

    data: bytes
    keyframe: bool


class CodedVideo(Protocol):
    """A source whose frames exist as coded packets a writer can copy."""

    @property
    def codec(self) -> str:
        """h264, hevc or av1."""
        ...

    def packets(self, positions: Sequence[int]) -> Iterator[Packet]:
        """The packets at `positions`, in that order."""
        ...

    def copy_problem(self, positions: Sequence[int]) -> str:
        """Why the frames at `positions` cannot be copied as they are ("" when they can)."""
        ...


_ONE_THREAD: dict[str, int] = {"threads": 1}  # PyAV's scaler threads argument, {} where PyAV has none (before 16)


def frame_array(frame: Any, format: str) -> np.ndarray:
    """`frame.to_ndarray(format=format)` scaled on the calling thread: robokit runs its own threads, and the
    automatic slice threads of PyAV 18.1.1's per-thread scaler hang a forked child (Ray starts its servers so)
    that frees another thread's scaler."""
    global _ONE_THREAD
    try:
        array: np.ndarray = frame.to_ndarray(format=format, **_ONE_THREAD)
    except TypeError:
        if not _ONE_THREAD:
            raise
        _ONE_THREAD = {}
        array = frame.to_ndarray(format=format)
    return array


def decoder(codec: str) -> Any:
    """A fresh PyAV decoder for `codec` (h264, hevc, av1)."""
    return av.CodecContext.create(DECODERS[codec], "r")


def decode_packet(ctx: Any, data: bytes | None, label: str) -> list[Any]:
    """Feed one packet (None: flush) to `ctx`; damaged data raises SourceError naming `label`."""
    try:
        return list(ctx.decode(av.Packet(data) if data is not None else None))
    except av.error.FFmpegError as err:
        raise SourceError(f"{label}: coded video does not decode ({err})") from err


def obus(data: bytes) -> Iterator[tuple[int, int, int]]:
    """(type, start, end) of each OBU of a low-overhead AV1 temporal unit; one without a size field runs to the end."""
    i = 0
    while i < len(data):
        start, header = i, data[i]
        kind, extension, sized = (header >> 3) & 0xF, header & 4, header & 2
        i += 2 if extension else 1
        if not sized:
            yield kind, start, len(data)
            return
        size, shift = 0, 0
        while i < len(data):
            byte = data[i]
            i += 1
            size |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        i += size
        yield kind, start, min(i, len(data))


def has_sequence_header(data: bytes) -> bool:
    """Whether an AV1 temporal unit carries a sequence header (OBU type 1)."""
    return any(kind == 1 for kind, _, _ in obus(data))


class VideoFrames:
    """Frames of one coded stream; `packets` is a source of packet frames (`data` = one coded frame each).

    `keyframes[i]` says whether packet i decodes on its own; `reorders` whether the stream has B-frames (frames
    then come out of the decoder in display order, not in the order of their packets)."""

    def __init__(self, packets: FrameSource, codec: str, keyframes: np.ndarray, label: str, reorders: bool) -> None:
        self.codec = codec
        self.keyframes = np.asarray(keyframes, dtype=bool)
        self.reorders = reorders
        self._keys = np.flatnonzero(self.keyframes)
        self._packets = packets
        self._label = label

    def __len__(self) -> int:
        return len(self.keyframes)

    def packets(self, positions: Sequence[int]) -> Iterator[Packet]:
        for p, frame in zip(positions, self._packets.iter_frames(positions), strict=True):
            if frame.data is None:
                raise SourceError(f"{self._label}: packet {p} holds no data")
            yield Packet(frame.data, bool(self.keyframes[int(p)]))

    def keyframe_at_or_before(self, p: int) -> int:
        i = int(np.searchsorted(self._keys, p, "right")) - 1
        if i < 0:
            raise SourceError(f"{self._label}: frame {p} comes before the first keyframe")
        return int(self._keys[i])

    def copy_problem(self, positions: Sequence[int]) -> str:
        if not len(positions):
            return "no frames"
        if not self.keyframes[int(positions[0])]:
            return "the episode starts between keyframes"
        if self.reorders:
            return "the video has B-frames (frames decode out of display order)"
        return ""

    def iter_frames(self, positions: Iterable[int]) -> Iterator[Frame]:
        run: _Decoding | None = None
        try:
            for raw in positions:
                p = int(raw)
                if not 0 <= p < len(self):
                    raise IndexError(f"{self._label}: frame position {p} out of range 0..{len(self) - 1}")
                key = self.keyframe_at_or_before(p)
                if run is None or not run.reaches(p, key):
                    if run is not None:
                        run.close()
                    run = _Decoding(self, key)
                yield Frame("raw", pixels=run.frame(p))
        finally:
            if run is not None:
                run.close()


class _Decoding:
    """One decoder run from keyframe `start`: packet `fed` is the next to send, frame `out` the next to come."""

    def __init__(self, video: VideoFrames, start: int) -> None:
        self._ctx = decoder(video.codec)
        self._label = video._label
        self._packets = video.packets(range(start, len(video)))
        self.fed = self.out = start
        self._ready: dict[int, np.ndarray] = {}
        self._flushed = False

    def reaches(self, p: int, key: int) -> bool:
        """Whether frame `p` (after keyframe `key`) comes from this run without passing a keyframe to skip to."""
        return (p in self._ready or p >= self.out) and key <= self.fed

    def frame(self, p: int) -> np.ndarray:
        while p not in self._ready:
            if self._flushed:
                raise SourceError(f"{self._label}: frame {p} does not decode (damaged or missing packets)")
            packet = next(self._packets, None)
            self._flushed = packet is None
            for frame in decode_packet(self._ctx, packet.data if packet else None, f"{self._label} frame {self.fed}"):
                self._ready[self.out] = frame_array(frame, "rgb24")
                self.out += 1
            self.fed += packet is not None
        for old in [k for k in self._ready if k < p]:
            del self._ready[old]
        return self._ready[p]

    def close(self) -> None:
        close = getattr(self._packets, "close", None)
        if close is not None:
            close()
