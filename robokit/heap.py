"""Resident memory that follows what is in use, not what was: glibc heap settings, and arrays kept in files.

Frames and encoders' buffers (hundreds of KiB to MiBs each) are allocated and freed by many threads: glibc gives
each thread an arena of its own (up to 8 per CPU) and keeps what is freed in them. No-ops on other C libraries.
A long episode's timeline arrays (joints at 100 Hz for an hour: tens of MiB) live in mapped files instead,
resident only while read.
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import os
import sys
import tempfile
import threading
import time
import weakref
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, Any

import numpy as np

ARENAS = 2  # malloc arenas per robokit process (export_memory, 15 s → 120 s: +64 MiB with glibc's 16, +15 with 2)
SLACK = 4 << 20  # freed bytes malloc may keep resident before `release` trims (export_memory at 120 s: 270 MiB peak
# with 4 MiB, 279 with 16; LeRobot encode as fast, 0.99x; trimming after every segment cost 3 %)
_M_ARENA_MAX = -8  # mallopt parameter number (malloc.h)
_LIBC = ctypes.CDLL(None) if os.name == "posix" else None
_PAGE = os.sysconf("SC_PAGE_SIZE") if os.path.exists("/proc/self/statm") else None  # Linux: resident size
MAP_ABOVE = 64 << 10  # bytes: a larger timeline array lives in a mapped file (export_memory at 600 s: 280 MiB
# peak, 287 with every array in memory; at 256 KiB a 10-minute episode's arrays under it held 1 MiB that a
# 15-second one's did not, while encoding)
MAX_MAPPED = 1024  # mapped arrays and open row spools at once, each holding a file descriptor; past it arrays stay
# in memory
_mapped: weakref.WeakSet[mmap.mmap] = weakref.WeakSet()
_spools: weakref.WeakSet[RowSpool] = weakref.WeakSet()  # those holding a file open
_mapped_lock = threading.Lock()
_DONTNEED = getattr(mmap, "MADV_DONTNEED", None)  # absent on Windows
_after_trim: int | None = None  # `_unused_resident()` right after the last trim (None: not measured since)
_trim_lock = threading.Lock()  # a trim and the measure after it, one thread at a time
UNMAP_EVERY = 1.0  # seconds between drops of every mapped array's resident pages (`unmap_periodically`)
_unmapper: int | None = None  # the process whose unmapping thread runs (a forked child has none)


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


_mallinfo2 = getattr(_LIBC, "mallinfo2", None)  # glibc 2.33 and later
if _mallinfo2 is not None:
    _mallinfo2.restype = _MallInfo2


def own_process() -> None:
    """Set up a process robokit owns (the CLI, its workers), first thing: `limit_arenas` and
    `unmap_periodically`; never called in a host program that merely imports robokit."""
    limit_arenas()
    unmap_periodically()


def limit_arenas() -> None:
    """Cap this process's malloc arenas (`own_process`)."""
    mallopt = getattr(_LIBC, "mallopt", None)
    if mallopt is not None:
        mallopt(_M_ARENA_MAX, ARENAS)


def unmap_periodically() -> None:
    """Drop every mapped array's resident pages each `UNMAP_EVERY` seconds on a daemon thread, so that however a
    writer reads a long episode's columns (whole, row by row, several formats at once), at most a second of reads
    stays resident (`own_process`)."""
    global _unmapper
    if _DONTNEED is None or _unmapper == os.getpid():
        return
    _unmapper = os.getpid()

    def run() -> None:
        while True:
            time.sleep(UNMAP_EVERY)
            unmap_resident()

    threading.Thread(target=run, name="robokit-unmap", daemon=True).start()


def trim() -> None:
    """Give what was freed back to the system (glibc keeps it in its arenas otherwise, pyarrow in its allocator's,
    and resident memory creeps up episode after episode)."""
    release_arrow()
    unmap_resident()
    # `release` measures from here: what is freed next (encoders' start) goes back at the next segment's end, not
    # into the baseline (export_memory at 15 s: anonymous peak 121 -> 113 MiB)
    with _trim_lock:
        _trim_measured()


def release_arrow() -> None:
    """Give back what pyarrow's allocator (mimalloc or jemalloc, not malloc) keeps of freed tables: after writing
    an episode's Parquet rows (a 10-minute episode's left 10 MiB resident); a no-op until pyarrow is loaded."""
    pool = getattr(sys.modules.get("pyarrow"), "default_memory_pool", None)  # once loaded (not mid-import)
    if pool is not None:
        pool().release_unused()


def _malloc_trim() -> None:
    """Return malloc's free pages to the system (glibc only)."""
    malloc_trim = getattr(_LIBC, "malloc_trim", None)
    if malloc_trim is not None:
        malloc_trim(0)


def _unused_resident() -> int | None:
    """Resident bytes not in a live malloc allocation: libraries, Python's own arenas, and the freed pages malloc
    kept (None without glibc's mallinfo2 or /proc)."""
    if _mallinfo2 is None or _PAGE is None:
        return None
    with open("/proc/self/statm", "rb") as statm:
        resident = int(statm.read().split()[1]) * _PAGE
    info = _mallinfo2()
    return resident - int(info.uordblks) - int(info.hblkhd)


def release() -> None:
    """Trim once malloc keeps about `SLACK` more freed bytes resident than after the last trim; called after each
    encoded segment, so a long episode's memory stays at a segment's, at a trim every few segments at most."""
    global _after_trim
    unmap_resident()  # first: mapped pages are resident but no malloc's
    with _trim_lock:
        unused = _unused_resident()
        if unused is None:
            return
        if _after_trim is None:
            _after_trim = unused
        elif unused - _after_trim > SLACK:
            _trim_measured()


def _trim_measured() -> None:
    """Trim malloc and measure the baseline `release` compares with (the caller holds `_trim_lock`). Another thread
    may free between the two (an encoder ending with this one): its pages would count as the baseline and keep
    trims off until as much again is freed (10-minute episode: anonymous peak +10 MiB in one run of four), so a
    baseline more than `SLACK` above the last one is measured again after a second trim."""
    global _after_trim
    for _ in range(2):
        _malloc_trim()
        unused = _unused_resident()
        if unused is None or _after_trim is None or unused - _after_trim <= SLACK:
            break
    _after_trim = unused


def mapped(array: np.ndarray) -> np.ndarray:
    """`array` as is when small or already mapped, else a copy in an unlinked temporary file mapped into memory
    (shared, so writes stay: it behaves as the array did): the system's page cache holds it, and `unmap_resident`
    drops it from this process's resident memory between reads, so an episode's length does not raise the
    export's peak. In memory when no file can be made (the values are the same either way)."""
    if array.nbytes < MAP_ABOVE or array.dtype.kind not in "biuf" or is_mapped(array) or not _may_map():
        return array
    try:
        return _file_array([array], array.dtype, array.shape)
    except OSError:
        return array


def take(array: np.ndarray, rows: np.ndarray, columns: slice = slice(None)) -> np.ndarray:
    """`array[rows][:, columns]` of a 2-D array, contiguous; made a block at a time in a mapped file when large (see
    `mapped`), so a long topic's kept samples are never copied whole into anonymous memory. `array` itself when
    that is all of it, in order, and contiguous."""
    rows = np.asarray(rows, dtype=np.int64)
    width = len(range(*columns.indices(array.shape[1])))
    if width == array.shape[1] and array.flags.c_contiguous and len(rows) == len(array) and (not len(rows) or (
            rows[0] == 0 and bool(np.all(np.diff(rows) == 1)))):
        return array
    block = max(1, MAP_ABOVE // (max(1, width) * array.itemsize))
    return joined(lambda: (array[rows[start:start + block]][:, columns] for start in range(0, len(rows), block)),
                  array.dtype, (len(rows), width))


def joined(parts: Callable[[], Iterable[np.ndarray]], dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray:
    """The blocks of rows `parts()` makes (as they are asked for) joined into one array of `shape`: in a mapped file
    when large (see `mapped`), so the whole is never in anonymous memory; in memory when small or no file can be made
    (`parts` is called again)."""
    if int(np.prod(shape)) * dtype.itemsize >= MAP_ABOVE and dtype.kind in "biuf" and _may_map():
        with contextlib.suppress(OSError):  # no file, or the disk is full: in memory
            return _file_array(parts(), dtype, shape)
    return np.concatenate(list(parts())).reshape(shape) if shape[0] else np.empty(shape, dtype)


def blocks(array: np.ndarray, rows: int) -> Iterator[np.ndarray]:
    """`array` `rows` rows at a time; each block's pages of a mapped file (see `mapped`) leave resident memory once
    the next is asked for, so reading a long episode's column costs a block, not the column."""
    for start in range(0, len(array), rows):
        block = array[start:start + rows]
        yield block
        drop_pages(block)


def drop_pages(array: np.ndarray) -> None:
    """Drop the resident pages under `array` when it is a view of an array `mapped` placed in a file (they fault back
    in from the page cache when read again); a no-op for others."""
    found = _mapping(array)
    if _DONTNEED is None or found is None or not array.size:
        return
    top, view = found
    origin, low = top.__array_interface__["data"][0], array.__array_interface__["data"][0]
    high = low + array.itemsize
    for count, stride in zip(array.shape, array.strides, strict=True):  # the view's byte span, any stride order
        low, high = (low + (count - 1) * stride, high) if stride < 0 else (low, high + (count - 1) * stride)
    start = (low - origin) // mmap.PAGESIZE * mmap.PAGESIZE
    with contextlib.suppress(ValueError, OSError):  # closed since
        view.madvise(_DONTNEED, start, high - origin - start)


class RowSpool:
    """Rows (float64 unless `dtype` says) appended one at a time, in memory up to `MAP_ABOVE` bytes; past it, a block
    at a time into an unlinked temporary file, so a long topic's values are never whole in anonymous memory (a
    doubling buffer held twice an hour of joint states at its growth). `array()` maps them (see `mapped`); in memory
    without a file."""

    def __init__(self, width: int, dtype: type[np.number[Any]] = np.float64) -> None:
        self.width = width
        self.dtype = np.dtype(dtype)
        self._row_bytes = width * self.dtype.itemsize
        rows = max(16, MAP_ABOVE // (self.dtype.itemsize * max(1, width)))  # width 0: a message's empty array
        self._block = np.empty((rows, width), self.dtype)
        self._filled = 0  # rows in `_block`
        self._full: list[np.ndarray] = []  # full blocks kept in memory (no file could be made)
        self._file: IO[bytes] | None = None
        self._written = 0  # rows in the file

    def __len__(self) -> int:
        return self._written + sum(map(len, self._full)) + self._filled

    def append(self, row: Sequence[float] | np.ndarray) -> None:
        """Add one row; raises (ValueError, TypeError) before it counts when the row does not fit."""
        self._block[self._filled] = row
        self._filled += 1
        if self._filled == len(self._block):
            self._spill()

    def extend(self, rows: np.ndarray) -> None:
        """Add rows (N, width) at once."""
        done = 0
        while done < len(rows):
            take = min(len(rows) - done, len(self._block) - self._filled)
            self._block[self._filled:self._filled + take] = rows[done:done + take]
            self._filled, done = self._filled + take, done + take
            if self._filled == len(self._block):
                self._spill()

    def blocks(self, rows: int) -> Iterator[np.ndarray]:
        """The rows so far, at most `rows` at a time, read from the file (never mapped: no resident pages left)."""
        if self._file is not None:
            for start in range(0, self._written, rows):
                count = min(rows, self._written - start)
                self._file.seek(start * self._row_bytes)
                yield np.frombuffer(self._file.read(count * self._row_bytes), self.dtype).reshape(count, self.width)
        for block in [*self._full, self._block[: self._filled]]:
            for start in range(0, len(block), rows):
                yield block[start:start + rows]

    def array(self) -> np.ndarray:
        """The rows so far, (N, width): mapped once any went to the file (later appends leave it as it was)."""
        if self._file is None:
            return np.concatenate([*self._full, self._block[: self._filled]]) if self._full else \
                self._block[: self._filled]
        self._file.seek(self._written * self._row_bytes)
        self._file.write(self._block[: self._filled].data)  # the tail; the next full block overwrites it
        return _map(self._file, self.dtype, (len(self), self.width))

    def _spill(self) -> None:
        if self._file is None and not self._full and _may_map():
            with contextlib.suppress(OSError):
                self._file = tempfile.TemporaryFile(prefix="robokit-array-")  # noqa: SIM115 - the spool's, closed with it
                with _mapped_lock:
                    _spools.add(self)
        if self._file is None:
            self._full.append(self._block)
            self._block = np.empty_like(self._block)
        else:
            self._file.seek(self._written * self._row_bytes)
            self._file.write(self._block.data)
            self._written += len(self._block)
        self._filled = 0


class Ints:
    """int64 values appended one at a time (an index's per-message times and places, 8 bytes a message): a small
    `array` in memory, full ones moved to a `RowSpool` (a file past `MAP_ABOVE`), so a long recording's index is not
    whole in anonymous memory; as fast to append as an `array`. `array()` maps them (see `mapped`)."""

    def __init__(self) -> None:
        self._tail = array("q")
        self._rows = RowSpool(1, np.int64)
        self._made: np.ndarray | None = None  # the last `array()`, given again while nothing was appended since

    def __len__(self) -> int:
        return len(self._rows) + len(self._tail)

    def append(self, value: int) -> None:
        """Add one value; OverflowError (adding nothing) past int64."""
        self._tail.append(value)
        if len(self._tail) == _INTS_TAIL:
            self._move()

    def array(self) -> np.ndarray:
        """The values so far, (N,) int64; one mapping however often it is asked for (each holds a descriptor)."""
        if self._made is None or len(self._made) != len(self):
            self._move()
            self._made = self._rows.array().reshape(-1)
        return self._made

    def _move(self) -> None:
        if self._tail:
            self._rows.extend(np.frombuffer(self._tail, np.int64).reshape(-1, 1))
            self._tail = array("q")


_INTS_TAIL = 4096  # values an `Ints` appends to its `array` before moving them on


def _may_map() -> bool:
    """Whether another mapped array may be made (each holds a file descriptor)."""
    with _mapped_lock:
        return len(_mapped) + len(_spools) < MAX_MAPPED


def _file_array(parts: Iterable[np.ndarray], dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray:
    """`parts` one after another in an unlinked temporary file, mapped as one array (OSError without a file)."""
    with tempfile.TemporaryFile(prefix="robokit-array-") as file:
        for part in parts:
            file.write(np.ascontiguousarray(part).data)
        return _map(file, dtype, shape)


def _map(file: IO[bytes], dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray:
    """The first bytes of `file` as an array of `shape`, writable and shared, registered for `unmap_resident`."""
    file.flush()
    size = int(np.prod(shape)) * dtype.itemsize
    view = mmap.mmap(file.fileno(), size, access=mmap.ACCESS_WRITE) if size else None  # keeps its own descriptor
    if view is None:
        return np.empty(shape, dtype)
    with _mapped_lock:
        _mapped.add(view)
    return np.frombuffer(view, dtype=dtype).reshape(shape)


def is_mapped(array: np.ndarray) -> bool:
    """Whether `array` is (a view of) one that `mapped` placed in a file."""
    return _mapping(array) is not None


def _mapping(array: np.ndarray) -> tuple[np.ndarray, mmap.mmap] | None:
    """The whole array `mapped` made and its file mapping, when `array` is a view of one."""
    top, base = array, array.base
    while isinstance(base, np.ndarray):
        top, base = base, base.base
    if isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap) and base.obj in _mapped:
        return top, base.obj
    return None


def unmap_resident() -> None:
    """Drop the mapped arrays' pages from this process's resident memory; they stay in the page cache (or the
    file) and fault back in when next read."""
    if _DONTNEED is None:
        return
    with _mapped_lock:
        views = list(_mapped)
    for view in views:
        with contextlib.suppress(ValueError, OSError):  # closed since
            view.madvise(_DONTNEED)
