"""MP4 files of one video track joined into one without a muxer: each part's samples copied as byte ranges, the
sample tables spooled to a file until the movie box is written at the end.

FFmpeg's MP4 muxer keeps 72 bytes per frame in memory until its file closes (10 MiB for 40 minutes of two 30 fps
cameras); this keeps a 4-byte size per frame in a file, and copies the parts' bytes without demuxing them.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import BinaryIO

import numpy as np

from robokit import heap
from robokit.errors import ConversionError

_VISUAL_ENTRY = 78  # bytes of a visual sample entry's fixed fields, before its child boxes (ISO 14496-12 12.1.3)
_DROPPED = (b"btrt",)  # a part's bit rates: not the joined file's, and not needed to decode it
_MATRIX = struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)  # identity
_MOVIE_TIMESCALE = 1000
_TABLE_ROWS = 1 << 16  # sample sizes written per block when the movie box is made
_COPY = 1 << 20  # bytes copied at a time from a part's file


@dataclass(frozen=True)
class Track:
    """The single video track of an MP4 part: how it is coded (`entry`, the sample entry, and its rate), and where
    each of its samples lies in the part."""

    ftyp: bytes  # the part's file type box, brands included
    entry: bytes  # the sample entry (avc1, hvc1, av01, ...) with its codec configuration
    display: bytes  # the track header's width and height (16.16 fixed point)
    timescale: int
    delta: int  # ticks per sample (0 without samples)
    sizes: np.ndarray  # (N,) uint32
    offsets: np.ndarray  # (N,) int64, from the start of the part
    keys: np.ndarray  # (K,) int64: the sync samples, numbered from 0

    def fits(self, other: Track) -> bool:
        """Whether `other`'s samples can follow this track's in one file: the same coding and clock."""
        return (self.entry, self.timescale) == (other.entry, other.timescale)


def read_track(part: bytes | Path) -> Track:
    """The video track of an MP4 written by FFmpeg (encoded here, or remuxed from a recording); ConversionError when
    it is not one constant-rate video track that decodes in display order from its first sample, or is damaged."""
    try:
        with _open(part) as file:
            boxes = dict(_top_boxes(file))
            length = file.seek(0, io.SEEK_END)
        return _track(boxes, length)
    except (struct.error, ValueError, IndexError) as err:  # a box shorter than its fields
        raise ConversionError(f"video part: damaged MP4 boxes ({err})") from err


def _track(boxes: dict[bytes, bytes], length: int) -> Track:
    tracks = [trak for kind, trak in _boxes(_need(boxes, b"moov")) if kind == b"trak"]
    if len(tracks) != 1:
        raise ConversionError(f"video part: {len(tracks)} tracks, expected one video track")
    trak = dict(_boxes(tracks[0]))
    mdia = dict(_boxes(_need(trak, b"mdia")))
    stbl = dict(_boxes(_need(dict(_boxes(_need(mdia, b"minf"))), b"stbl")))
    mdhd = _need(mdia, b"mdhd")
    timescale = struct.unpack_from(">I", mdhd, 20 if mdhd[0] == 1 else 12)[0]
    tkhd = _need(trak, b"tkhd")
    sizes = _sample_sizes(_need(stbl, b"stsz"), length)
    delta = _constant_delta(_need(stbl, b"stts"), len(sizes))
    if _reorders(stbl.get(b"ctts", b"")) or _edits(trak.get(b"edts", b"")):
        raise ConversionError("video part: frames are not shown in decoding order from its first (B-frames or an "
                              "edit list); cannot concatenate")
    if not timescale or len(tkhd) < 8:
        raise ConversionError("video part: no timescale or no display size")
    offsets = _sample_offsets(stbl, sizes)
    if len(sizes) and int((offsets + sizes).max()) > length:  # checked before a byte is copied
        raise ConversionError(f"video part: its samples run past its {length} bytes (truncated?)")
    return Track(_need(boxes, b"ftyp"), _sample_entry(_need(stbl, b"stsd")), bytes(tkhd[-8:]), timescale, delta,
                 sizes, offsets, _sync_samples(stbl.get(b"stss"), len(sizes)))


class VideoConcatenator:
    """MP4 parts of one video (same coding, pts from frame 0, no B-frames) joined into one continuous MP4: frame k of
    a part appended at frame s is frame s + k of the file. Samples are copied, never re-encoded nor demuxed; the
    file is complete only once `close` has written its movie box."""

    def __init__(self, path: Path, fps: int) -> None:
        self.fps = fps
        self.frames = 0
        self.size = 0  # sample bytes copied so far
        self._path = path
        self._file: BinaryIO | None = None
        self._first: Track | None = None
        self._sizes = heap.RowSpool(1, np.uint32)
        self._keys = heap.RowSpool(1, np.int64)

    def fits(self, track: Track) -> bool:
        """Whether a part (its `read_track`) can follow the frames already written: the same coding (else it starts
        a new file)."""
        return self._first is None or self._first.fits(track)

    def append(self, part: bytes | Path, track: Track | None = None) -> tuple[int, int]:
        """Copy one part's samples after the frames already written (`track`: the part's, when already read);
        returns its (first, end) frame."""
        track = track if track is not None else read_track(part)
        if track.delta and track.timescale != track.delta * self.fps:
            rate = Fraction(track.timescale, track.delta)
            raise ConversionError(f"video part at frame {self.frames}: {rate} frames per second, the file has "
                                  f"{self.fps}")
        if self._first is None:
            self._first = track
            self._file = open(self._path, "wb")  # noqa: SIM115 - complete only at `close`, which closes it
            self._file.write(_box(b"ftyp", track.ftyp) + struct.pack(">I4sQ", 1, b"mdat", 0))  # size set on close
        elif not self._first.fits(track):
            raise ConversionError(f"video part at frame {self.frames}: codec headers differ from the file's first "
                                  "part; cannot concatenate")
        assert self._file is not None
        start = self.frames
        with _open(part) as source:
            for offset, length in _runs(track.offsets, track.sizes):
                _copy(source, self._file, offset, length)
        self._sizes.extend(track.sizes.reshape(-1, 1))
        self._keys.extend((start + track.keys).reshape(-1, 1))
        self.frames += len(track.sizes)
        self.size += int(track.sizes.sum(dtype=np.int64))
        return start, self.frames

    def close(self) -> None:
        """Write the movie box after the samples and the media box's size: the file is then complete."""
        if self._file is None or self._first is None:
            return
        file, self._file = self._file, None
        with file:
            mdat = len(_box(b"ftyp", self._first.ftyp))
            file.seek(mdat + 8)
            file.write(struct.pack(">Q", 16 + self.size))
            file.seek(0, io.SEEK_END)
            for piece in self._movie(mdat + 16):
                file.write(piece)

    def _movie(self, data_start: int) -> Iterator[bytes]:
        """The movie box in pieces, its sample tables streamed from the spools (one sample per chunk)."""
        first = self._first
        assert first is not None
        n, keys, delta = self.frames, len(self._keys), first.timescale // self.fps  # as `append` checked
        media = n * delta
        movie = media * _MOVIE_TIMESCALE // first.timescale
        small = (_full_box(b"stsd", struct.pack(">I", 1) + first.entry)
                 + _full_box(b"stts", struct.pack(">III", 1, n, delta) if n else bytes(4))
                 + _full_box(b"stsc", struct.pack(">IIII", 1, 1, 1, 1) if n else bytes(4)))
        stss = 0 if keys == n else 16 + 4 * keys  # no table: every sample is a keyframe
        stsz, co64 = 20 + 4 * n, 16 + 8 * n
        stbl = 8 + len(small) + stss + stsz + co64
        head = (_full_box(b"mdhd", _times(first.timescale, media) + struct.pack(">HH", 0x55C4, 0))  # language und
                + _full_box(b"hdlr", struct.pack(">I4s12x", 0, b"vide") + b"VideoHandler\0"))
        minf_head = (_full_box(b"vmhd", bytes(8), flags=1)
                     + _box(b"dinf", _full_box(b"dref", struct.pack(">I", 1) + _full_box(b"url ", b"", flags=1))))
        minf = 8 + len(minf_head) + stbl
        mdia = 8 + len(head) + minf
        tkhd = _full_box(b"tkhd", _times(None, movie) + bytes(16) + _MATRIX + first.display, flags=3)  # enabled
        trak = 8 + len(tkhd) + mdia
        mvhd = _full_box(b"mvhd", _times(_MOVIE_TIMESCALE, movie) + struct.pack(">IH10x", 0x10000, 0x100) + _MATRIX
                         + bytes(24) + struct.pack(">I", 2))  # rate 1, volume 1, the next track's id
        yield _header(b"moov", 8 + len(mvhd) + trak) + mvhd
        yield _header(b"trak", trak) + tkhd + _header(b"mdia", mdia) + head
        yield _header(b"minf", minf) + minf_head + _header(b"stbl", stbl) + small
        if stss:
            yield _header(b"stss", stss) + struct.pack(">II", 0, keys)
            for block in self._keys.blocks(_TABLE_ROWS):
                yield (block + 1).astype(">u4").tobytes()
        yield _header(b"stsz", stsz) + struct.pack(">III", 0, 0, n)
        for block in self._sizes.blocks(_TABLE_ROWS):
            yield block.astype(">u4").tobytes()
        yield _header(b"co64", co64) + struct.pack(">II", 0, n)
        for block in self._sizes.blocks(_TABLE_ROWS):
            ends = data_start + np.cumsum(block, dtype=np.int64)
            yield (ends - block[:, 0]).astype(">u8").tobytes()
            data_start = int(ends[-1])


def _open(part: bytes | Path) -> BinaryIO:
    return io.BytesIO(part) if isinstance(part, bytes) else open(part, "rb")


def _top_boxes(file: BinaryIO) -> Iterator[tuple[bytes, bytes]]:
    """(type, body) of the file's top-level boxes; the media data's body is skipped (b"")."""
    end = file.seek(0, io.SEEK_END)
    at = 0
    while at + 8 <= end:
        file.seek(at)
        kind, header, size = _read_header(file.read(16), end - at, open_ended=True)
        file.seek(at + header)
        yield kind, b"" if kind == b"mdat" else file.read(size - header)
        at += size


def _boxes(data: bytes) -> Iterator[tuple[bytes, bytes]]:
    """(type, body) of the boxes one after another in `data`."""
    at = 0
    while at + 8 <= len(data):
        kind, header, size = _read_header(data[at:at + 16], len(data) - at)
        yield kind, data[at + header:at + size]
        at += size


def _read_header(head: bytes, room: int, open_ended: bool = False) -> tuple[bytes, int, int]:
    """(type, header length, size) of the box starting with `head` (up to 16 bytes), `room` bytes being left in its
    parent; a top-level box (`open_ended`) of size 0 runs to the end of the file."""
    size, kind = struct.unpack_from(">I4s", head)
    header = 8
    if size == 1:
        size, header = struct.unpack_from(">Q", head, 8)[0], 16
    elif size == 0 and open_ended:
        size = room
    if size < header or size > room:
        raise ConversionError(f"video part: box {kind!r} runs past its parent (truncated?)")
    return kind, header, size


def _need(boxes: dict[bytes, bytes], kind: bytes) -> bytes:
    if kind not in boxes:
        raise ConversionError(f"video part: no {kind.decode()} box")
    return boxes[kind]


def _sample_entry(stsd: bytes) -> bytes:
    """The one sample entry, its bit-rate box left out."""
    (count,) = struct.unpack_from(">I", stsd, 4)
    entries = list(_boxes(stsd[8:]))
    if count != 1 or len(entries) != 1 or len(entries[0][1]) < _VISUAL_ENTRY:
        raise ConversionError(f"video part: {count} sample descriptions, expected one video description")
    kind, body = entries[0]
    children = b"".join(_box(k, b) for k, b in _boxes(body[_VISUAL_ENTRY:]) if k not in _DROPPED)
    return _box(kind, body[:_VISUAL_ENTRY] + children)


def _sample_sizes(stsz: bytes, length: int) -> np.ndarray:
    """Each sample's bytes; ConversionError when they could not fit in the part's `length` bytes."""
    size, count = struct.unpack_from(">II", stsz, 4)
    if count * max(size, 1) > length:
        raise ConversionError(f"video part: {count} samples cannot fit in its {length} bytes")
    if size:
        return np.full(count, size, np.uint32)
    if len(stsz) < 12 + 4 * count:
        raise ConversionError("video part: sample size table cut short")
    return np.frombuffer(stsz, ">u4", count, 12).astype(np.uint32)


def _table(body: bytes, width: int, dtype: str = ">u4") -> np.ndarray:
    """A full box's table: a count, then `width` numbers per entry."""
    (count,) = struct.unpack_from(">I", body, 4)
    if len(body) < 8 + count * width * np.dtype(dtype).itemsize:
        raise ConversionError("video part: a sample table is cut short")
    return np.frombuffer(body, dtype, count * width, 8).reshape(count, width).astype(np.int64)


def _constant_delta(stts: bytes, samples: int) -> int:
    """Ticks per sample; ConversionError unless every sample lasts as long (the last may be cut: its own end)."""
    runs = _table(stts, 2)
    if int(runs[:, 0].sum()) != samples:
        raise ConversionError(f"video part: {int(runs[:, 0].sum())} sample times for {samples} samples")
    deltas = np.repeat(runs[:, 1], runs[:, 0])
    if len(deltas) > 1 and (np.any(deltas[:-1] != deltas[0]) or not 0 < deltas[-1] <= deltas[0]):
        raise ConversionError("video part: frames are not evenly spaced; cannot concatenate")
    return int(deltas[0]) if len(deltas) else 0


def _reorders(ctts: bytes) -> bool:
    return bool(ctts) and bool(np.any(_table(ctts, 2)[:, 1] != 0))


def _edits(edts: bytes) -> bool:
    """Whether an edit list moves or cuts the media (anything but one edit from its start)."""
    for kind, elst in _boxes(edts):
        if kind == b"elst":
            wide = elst[0] == 1
            entries = _table(elst, 5 if wide else 3)  # v1: 8-byte duration and time as two words each
            times = entries[:, 2] * (1 << 32) + entries[:, 3] if wide else entries[:, 1]
            return len(entries) != 1 or int(times[0]) != 0
    return False


def _sample_offsets(stbl: dict[bytes, bytes], sizes: np.ndarray) -> np.ndarray:
    """Where each sample starts in its part: chunk offsets, samples per chunk, then sizes within a chunk."""
    chunks = (_table(stbl[b"co64"], 1, ">u8") if b"co64" in stbl else _table(_need(stbl, b"stco"), 1))[:, 0]
    runs = _table(_need(stbl, b"stsc"), 3)  # first chunk (from 1), samples per chunk, description
    firsts = np.append(runs[:, 0], len(chunks) + 1)
    per_chunk = np.repeat(runs[:, 1], np.clip(np.diff(firsts), 0, len(chunks)))
    if len(per_chunk) != len(chunks) or int(per_chunk.sum()) != len(sizes) or np.any(per_chunk <= 0):
        raise ConversionError("video part: its chunk table does not hold its samples")
    chunk_of = np.repeat(np.arange(len(chunks)), per_chunk)
    ends = np.cumsum(sizes, dtype=np.int64)
    starts = ends - sizes
    chunk_start = np.repeat(starts[np.cumsum(per_chunk) - per_chunk], per_chunk)
    offsets: np.ndarray = chunks[chunk_of] + (starts - chunk_start)
    return offsets


def _sync_samples(stss: bytes | None, samples: int) -> np.ndarray:
    """The sync samples from 0 (all of them when there is no table)."""
    if stss is None:
        return np.arange(samples, dtype=np.int64)
    keys = _table(stss, 1)[:, 0] - 1
    if np.any(keys < 0) or np.any(keys >= samples):
        raise ConversionError("video part: its keyframe table names samples it does not have")
    return keys


def _runs(offsets: np.ndarray, sizes: np.ndarray) -> Iterator[tuple[int, int]]:
    """(offset, length) of the byte ranges the samples fill, adjacent samples merged."""
    if not len(sizes):
        return
    breaks = np.flatnonzero(offsets[1:] != offsets[:-1] + sizes[:-1]) + 1
    for lo, hi in zip(np.r_[0, breaks].tolist(), np.r_[breaks, len(sizes)].tolist(), strict=True):
        yield int(offsets[lo]), int(offsets[hi - 1] + sizes[hi - 1] - offsets[lo])


def _copy(source: BinaryIO, target: BinaryIO, offset: int, length: int) -> None:
    source.seek(offset)
    while length > 0:
        data = source.read(min(length, _COPY))
        if not data:  # shortened since it was read
            raise ConversionError(f"video part: ends before its samples do (byte {offset})")
        target.write(data)
        length -= len(data)


def _times(timescale: int | None, duration: int) -> bytes:
    """A version 1 header's creation and modification times (0), its timescale (None: a track header's id 1 and a
    reserved word) and its 64-bit duration."""
    middle = struct.pack(">I", timescale) if timescale is not None else struct.pack(">II", 1, 0)
    return struct.pack(">QQ", 0, 0) + middle + struct.pack(">Q", duration)


def _full_box(kind: bytes, body: bytes, flags: int = 0) -> bytes:
    """A full box: version 1 for the headers (64-bit times and durations), 0 for the rest."""
    version = 1 if kind in (b"mdhd", b"tkhd", b"mvhd") else 0
    return _box(kind, struct.pack(">I", version << 24 | flags) + body)


def _header(kind: bytes, size: int) -> bytes:
    return struct.pack(">I4s", size, kind)


def _box(kind: bytes, body: bytes) -> bytes:
    return _header(kind, 8 + len(body)) + body
