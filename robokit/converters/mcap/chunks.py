"""MCAP chunks parsed directly: one read and one decompression per chunk, records walked with `struct`.

mcap's own reader builds each record through a BytesIO stream and orders messages by comparing wrapper
objects; here a chunk's messages are sliced out of it once and ordered by plain tuples in a heap.
Payloads are copied out (not views): the chunk is then freed at once, so the allocator reuses its memory
instead of faulting in fresh pages for every chunk, and no kept value ever pins a whole chunk.

Large uncompressed chunks without a CRC to check (what rosbag2 writes) are walked in the file instead: only
the wanted messages are read, each straight into its own bytes, and a channel that needs only its messages'
headers reads their first bytes (`Head`). The walk makes the same checks, so a chunk is damaged for both alike.
"""

from __future__ import annotations

import heapq
import importlib
import itertools
import struct
import zlib
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import IO, NamedTuple

import numpy as np
import zstandard
from mcap.records import ChunkIndex

from robokit import heap
from robokit.ros import heads
from robokit.ros.heads import Head

_RECORD = struct.Struct("<BQ")  # opcode, record length
_CHUNK = struct.Struct("<QQQII")  # start and end time, uncompressed size and CRC, compression name length
_MESSAGE = struct.Struct("<HIQQ")  # channel id, sequence, log time, publish time
_MESSAGE_OPCODE, _CHUNK_OPCODE = 0x05, 0x06


class RawMessage(NamedTuple):
    """One Message record (the fields of mcap's `Message`)."""

    channel_id: int
    sequence: int
    log_time: int
    publish_time: int
    data: bytes | Head


class ChunkError(ValueError):
    """A chunk that cannot be used: unreadable, bad compression, CRC mismatch or malformed records."""


def _decompress(compression: str, data: memoryview, size: int) -> bytes | memoryview:
    if compression == "":
        return data
    if compression == "zstd":
        return bytes(zstandard.ZstdDecompressor().decompress(data, max_output_size=size))
    if compression == "lz4":
        try:
            lz4 = importlib.import_module("lz4.frame")  # an mcap dependency, imported on first use
        except ImportError as err:
            raise ChunkError("lz4 chunk, and the lz4 package is not installed") from err
        return bytes(lz4.decompress(data))
    raise ChunkError(f"unsupported chunk compression {compression!r}")


def chunk_records(body: bytes | memoryview, verify: bool) -> bytes | memoryview:
    """The decompressed records of a Chunk record's body (after opcode and length); CRC-checked when `verify`."""
    view = memoryview(body)
    try:
        _, _, size, crc, name_len = _CHUNK.unpack_from(view, 0)
        at = _CHUNK.size + name_len
        compression = bytes(view[_CHUNK.size:at]).decode()
        (records_len,) = struct.unpack_from("<Q", view, at)
    except (struct.error, UnicodeDecodeError) as err:
        raise ChunkError(f"malformed chunk header ({err})") from err
    compressed = view[at + 8: at + 8 + records_len]
    if len(compressed) != records_len:
        raise ChunkError(f"chunk records cut short ({len(compressed)} of {records_len} bytes)")
    try:
        records = _decompress(compression, compressed, size)
    except zstandard.ZstdError as err:
        raise ChunkError(f"zstd: {err}") from err
    except RuntimeError as err:  # lz4.frame's error type
        raise ChunkError(f"lz4: {err}") from err
    except MemoryError as err:  # a damaged size asking for more than there is
        raise ChunkError(f"chunk claims {size} bytes uncompressed, more than can be allocated") from err
    if len(records) != size:
        raise ChunkError(f"chunk decompressed to {len(records)} bytes, its header says {size}")
    if verify and crc != 0 and (actual := zlib.crc32(records)) != crc:
        raise ChunkError(f"CRC mismatch ({actual:#010x}, chunk says {crc:#010x})")
    return records


def read_chunk(f: IO[bytes], offset: int, verify: bool) -> bytes | memoryview:
    """The decompressed records of the Chunk record starting at byte `offset` of `f`."""
    f.seek(offset)
    head = f.read(_RECORD.size)
    if len(head) < _RECORD.size:
        raise ChunkError("file ends before the chunk")
    opcode, length = _RECORD.unpack(head)
    if opcode != _CHUNK_OPCODE:
        raise ChunkError(f"record at the chunk's offset has opcode {opcode:#04x}")
    here = f.tell()
    left = f.seek(0, 2) - here
    if length > left:  # checked before reading: a damaged length must not allocate it
        raise ChunkError(f"chunk of {length} bytes runs past the file's end ({left} bytes left)")
    f.seek(here)
    body = f.read(length)
    if len(body) != length:
        raise ChunkError(f"file ends inside the chunk ({len(body)} of {length} bytes)")
    return chunk_records(body, verify)


def chunk_messages(f: IO[bytes], offset: int, verify: bool, wanted: Callable[[int], bool],
                   head: Callable[[int], int] | None = None) -> list[RawMessage]:
    """The wanted Message records of the Chunk at byte `offset`, in record order; a channel for which `head` gives a
    length > 0 may get a `Head` of that many bytes as its data. Raises ChunkError for a damaged chunk. The walk's
    record checks are `messages_in`'s, written apart because that loop is the hot one (tests/.../test_walk.py)."""
    span = _walkable(f, offset, verify)
    if span is None:
        return list(messages_in(read_chunk(f, offset, verify), wanted))
    first, end = span
    at = first
    found: list[RawMessage] = []
    while at < end:
        f.seek(at)
        fixed = f.read(min(_RECORD.size + _MESSAGE.size, end - at))
        if len(fixed) < _RECORD.size:
            raise ChunkError(f"chunk records end inside a record header at byte {at - first}")
        opcode, length = _RECORD.unpack_from(fixed)
        record, at = at - first, at + _RECORD.size + length
        if at > end:
            raise ChunkError(f"record at byte {record} runs past the chunk's end")
        if opcode != _MESSAGE_OPCODE:
            continue
        if length < _MESSAGE.size:
            raise ChunkError(f"message record of {length} bytes at byte {record}")
        if len(fixed) < _RECORD.size + _MESSAGE.size:  # only when the file shrank under the reader
            raise ChunkError(f"file ends inside the message at byte {record}")
        channel, sequence, log_time, publish_time = _MESSAGE.unpack_from(fixed, _RECORD.size)
        if not wanted(channel):
            continue
        size = length - _MESSAGE.size
        keep = min(size, head(channel) or size) if head is not None else size
        data = f.read(keep)
        if len(data) != keep:
            raise ChunkError(f"file ends inside the message at byte {record}")
        if keep < size:
            data_at = first + record + _RECORD.size + _MESSAGE.size
            found.append(RawMessage(channel, sequence, log_time, publish_time, Head(data, size, f, data_at)))
        else:
            found.append(RawMessage(channel, sequence, log_time, publish_time, data))
    return found


def _walkable(f: IO[bytes], offset: int, verify: bool) -> tuple[int, int] | None:
    """The file span of a chunk's records when it is large, uncompressed and needs no CRC check, and its header is
    sound; None sends it to `read_chunk`, which reports whatever is wrong."""
    f.seek(offset)
    head = f.read(_RECORD.size + _CHUNK.size)
    if len(head) < _RECORD.size + _CHUNK.size:
        return None
    opcode, length = _RECORD.unpack_from(head)
    _, _, size, crc, name_len = _CHUNK.unpack_from(head, _RECORD.size)
    if opcode != _CHUNK_OPCODE or name_len or (verify and crc) or size < heads.WALK_ABOVE:
        return None
    count = f.read(8)
    records = offset + _RECORD.size + _CHUNK.size + 8
    if len(count) < 8 or struct.unpack("<Q", count)[0] != size or size + _CHUNK.size + 8 > length:
        return None
    if offset + _RECORD.size + length > f.seek(0, 2):  # read_chunk refuses a chunk running past the file's end
        return None
    return records, records + size


def messages_in(records: bytes | memoryview, wanted: Callable[[int], bool]) -> Iterator[RawMessage]:
    """The Message records of a chunk's records of channels `wanted`, in record order; other records skipped."""
    view = memoryview(records)
    end, at = len(view), 0
    unpack_record, unpack_message = _RECORD.unpack_from, _MESSAGE.unpack_from
    while at < end:
        if end - at < _RECORD.size:
            raise ChunkError(f"chunk records end inside a record header at byte {at}")
        opcode, length = unpack_record(view, at)
        start, at = at + _RECORD.size, at + _RECORD.size + length
        if at > end:
            raise ChunkError(f"record at byte {start - _RECORD.size} runs past the chunk's end")
        if opcode != _MESSAGE_OPCODE:
            continue
        if length < _MESSAGE.size:
            raise ChunkError(f"message record of {length} bytes at byte {start - _RECORD.size}")
        channel, sequence, log_time, publish_time = unpack_message(view, start)
        if wanted(channel):
            yield RawMessage(channel, sequence, log_time, publish_time, view[start + _MESSAGE.size: at].tobytes())


class ChunkTable:
    """A summary's chunk index in arrays: mcap's ChunkIndex objects take about 1 KiB each, and an hour's
    recording has tens of thousands of chunks, held for as long as the file is read."""

    BLOCK = 512  # chunks a scan filters at once: its memory is a block's, however long the recording

    def __init__(self, indexes: Iterable[ChunkIndex]) -> None:
        """Made in one pass, so the ChunkIndex objects can be dropped as they are read."""
        sets: dict[frozenset[int], int] = {}
        holds, starts, ends, offsets = array("q"), array("Q"), array("Q"), array("Q")
        for i in indexes:
            holds.append(sets.setdefault(frozenset(i.message_index_offsets), len(sets)))
            starts.append(i.message_start_time)
            ends.append(i.message_end_time)
            offsets.append(i.chunk_start_offset)
        # in mapped files once long (`heap.mapped`): 40 bytes a chunk, 0.7 MiB for the 10-minute 640x480 sample of
        # bench/export_memory.py, held while its episode is encoded
        self._holds = heap.mapped(np.frombuffer(holds, np.int64))
        self._channels = tuple(sets)  # the distinct sets of channels the chunks hold, by first appearance
        self._starts = heap.mapped(np.frombuffer(starts, np.uint64))
        self._ends = heap.mapped(np.frombuffer(ends, np.uint64))
        self._offsets = heap.mapped(np.frombuffer(offsets, np.uint64))
        self._order = heap.mapped(np.lexsort((self._offsets, self._starts)))  # (start time, offset) order, sorted once

    def __len__(self) -> int:
        return len(self._offsets)

    def reaching(self, channels: Collection[int] | None, start: int | None) -> Iterator[tuple[int, int]]:
        """(start time, offset) of the chunks that may hold one of `channels` (None: any; a chunk without message
        indexes may hold anything) and end at or after log time `start`, in (start time, offset) order; filtered
        a block at a time as the scan goes (every segment of a long episode scans from its own start to the end)."""
        holds = None
        if channels is not None and len(self):
            holds = np.array([not held or any(c in channels for c in held) for held in self._channels])
        for at in range(0, len(self), self.BLOCK):
            block = self._order[at:at + self.BLOCK]
            if start is not None:
                block = block[self._ends[block] >= np.uint64(start)]
            if holds is not None:
                block = block[holds[self._holds[block]]]
            yield from zip(self._starts[block].tolist(), self._offsets[block].tolist(), strict=True)


class LogTimeQueue:
    """Chunks and messages in log-time order, ties by chunk offset then record position (as mcap orders them).

    Chunks come in (start time, offset) order and are taken when they sort before every queued message (a
    chunk before a message at its own start time, as position -1), so only messages of opened chunks wait in
    the heap. Messages are plain tuples (log time, chunk offset, position, insertion count, message): a damaged
    index naming one chunk twice queues its messages twice, still in order."""

    def __init__(self, chunks: Iterator[tuple[int, int]]) -> None:
        self._heap: list[tuple[int, int, int, int, RawMessage]] = []
        self._count = itertools.count()
        self._chunks = chunks
        self._next = next(chunks, None)

    def __bool__(self) -> bool:
        return bool(self._heap) or self._next is not None

    def push_message(self, message: RawMessage, offset: int, position: int) -> None:
        heapq.heappush(self._heap, (message.log_time, offset, position, next(self._count), message))

    def pop(self) -> int | RawMessage:
        """The next message, or the offset of the next chunk to open."""
        chunk = self._next
        if chunk is not None and (not self._heap or (chunk[0], chunk[1], -1) < self._heap[0][:3]):
            self._next = next(self._chunks, None)
            return chunk[1]
        return heapq.heappop(self._heap)[4]
