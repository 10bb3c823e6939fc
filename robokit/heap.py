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
import weakref

import numpy as np

ARENAS = 2  # malloc arenas per robokit process (export_memory, 15 s → 120 s: +64 MiB with glibc's 16, +15 with 2)
SLACK = 4 << 20  # freed bytes malloc may keep resident before `release` trims (export_memory at 120 s: 270 MiB peak
# with 4 MiB, 279 with 16; LeRobot encode as fast, 0.99x; trimming after every segment cost 3 %)
_M_ARENA_MAX = -8  # mallopt parameter number (malloc.h)
_LIBC = ctypes.CDLL(None) if os.name == "posix" else None
_PAGE = os.sysconf("SC_PAGE_SIZE") if os.path.exists("/proc/self/statm") else None  # Linux: resident size
MAP_ABOVE = 256 << 10  # bytes: a larger timeline array lives in a mapped file (export_memory at 600 s: 280 MiB
# peak, 287 with every array in memory)
MAX_MAPPED = 1024  # mapped arrays at once, each holding a file descriptor; past it arrays stay in memory
_mapped: weakref.WeakSet[mmap.mmap] = weakref.WeakSet()
_mapped_lock = threading.Lock()
_DONTNEED = getattr(mmap, "MADV_DONTNEED", None)  # absent on Windows
_after_trim: int | None = None  # `_unused_resident()` right after the last trim (None: not measured since)


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


_mallinfo2 = getattr(_LIBC, "mallinfo2", None)  # glibc 2.33 and later
if _mallinfo2 is not None:
    _mallinfo2.restype = _MallInfo2


def limit_arenas() -> None:
    """Cap this process's malloc arenas; called first thing in the CLI and in worker processes, never in a host
    program that merely imports robokit."""
    mallopt = getattr(_LIBC, "mallopt", None)
    if mallopt is not None:
        mallopt(_M_ARENA_MAX, ARENAS)


def trim() -> None:
    """Give what was freed back to the system (glibc keeps it in its arenas otherwise, pyarrow in its allocator's,
    and resident memory creeps up episode after episode)."""
    global _after_trim
    _malloc_trim()
    pool = getattr(sys.modules.get("pyarrow"), "default_memory_pool", None)  # once loaded (not mid-import)
    if pool is not None:  # its own allocator (mimalloc or jemalloc) keeps the tables' freed pages too
        pool().release_unused()
    unmap_resident()
    # `release` measures from here: what is freed next (encoders' start) goes back at the next segment's end, not
    # into the baseline (export_memory at 15 s: anonymous peak 121 -> 113 MiB)
    _after_trim = _unused_resident()


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
    unused = _unused_resident()
    if unused is None:
        return
    if _after_trim is None:
        _after_trim = unused
    elif unused - _after_trim > SLACK:
        _malloc_trim()  # the mapped pages are already dropped
        _after_trim = _unused_resident()


def mapped(array: np.ndarray) -> np.ndarray:
    """`array` as is when small or already mapped, else a copy in an unlinked temporary file mapped into memory
    (shared, so writes stay: it behaves as the array did): the system's page cache holds it, and `unmap_resident`
    drops it from this process's resident memory between reads, so an episode's length does not raise the
    export's peak. In memory when no file can be made (the values are the same either way)."""
    if array.nbytes < MAP_ABOVE or array.dtype.kind not in "biuf" or is_mapped(array):
        return array
    with _mapped_lock:
        if len(_mapped) >= MAX_MAPPED:
            return array
    try:
        with tempfile.TemporaryFile(prefix="robokit-array-") as file:
            file.write(np.ascontiguousarray(array).data)
            file.flush()
            view = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_WRITE)  # keeps its own descriptor
    except OSError:
        return array
    with _mapped_lock:
        _mapped.add(view)
    return np.frombuffer(view, dtype=array.dtype).reshape(array.shape)


def is_mapped(array: np.ndarray) -> bool:
    """Whether `array` is (a view of) one that `mapped` placed in a file."""
    base = array.base
    while isinstance(base, np.ndarray):
        base = base.base
    return isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap) and base.obj in _mapped


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
