from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest


def _in_fresh_process(code: str) -> str:
    """In a process of its own: the cap applies to the whole process, and must come before its threads."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


def test_arena_cap_and_trim_run_in_a_fresh_process() -> None:
    assert _in_fresh_process("from robokit import heap; heap.limit_arenas(); heap.trim(); print('ok')") == "ok\n"


# A fresh process's start: robokit's arena cap, glibc's malloc and free, its resident bytes.
_MALLOC = """
import ctypes, os
from robokit import heap
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
def resident():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
def filled(n):  # n resident 64 KiB blocks
    blocks = [libc.malloc(64 << 10) for _ in range(n)]
    for b in blocks:
        ctypes.memset(b, 1, 64 << 10)
    return blocks
heap.limit_arenas()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc and /proc")
def test_release_returns_freed_memory_only_past_the_slack() -> None:
    """64 MiB freed under a live block (so glibc cannot shrink its heap's top): `release` gives it back once it
    passes `SLACK`, and does nothing while less is kept."""
    code = _MALLOC + """
heap.release()  # measures the baseline
blocks = filled(1024)
pin = libc.malloc(64 << 10)  # above them: the heap's top cannot be trimmed
few = heap.SLACK // 2 // (64 << 10)  # half the slack
for b in blocks[:few]:
    libc.free(b)
before = resident(); heap.release(); small = before - resident()
for b in blocks[few:]:
    libc.free(b)
before = resident(); heap.release(); large = before - resident()
print(small >> 20, large >> 20)
"""
    small, large = (int(v) for v in _in_fresh_process(code).split())
    assert abs(small) <= 2  # no trim: a page or two of the interpreter's own may come or go meanwhile
    assert large >= 48


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc and /proc")
def test_release_after_a_trim_measures_from_the_trim() -> None:
    """Freed right after a trim (an encoder closing as the next opens): the first `release` gives it back; it
    used to take that state as its baseline and keep the freed pages until the next segment."""
    code = _MALLOC + """
heap.trim()
blocks = filled(1024)
pin = libc.malloc(64 << 10)
for b in blocks:
    libc.free(b)
before = resident(); heap.release(); print((before - resident()) >> 20)
"""
    assert int(_in_fresh_process(code)) >= 48


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc and /proc")
def test_memory_freed_between_a_trim_and_its_measure_is_not_taken_for_the_baseline() -> None:
    """Another encoder ending during a `release`'s trim frees 64 MiB before the baseline is measured: it is given
    back by a second trim (it used to become the baseline, so later releases kept it, and more)."""
    code = _MALLOC + """
heap.trim()
mine, theirs = filled(2 * heap.SLACK // (64 << 10)), filled(1024)
pin = libc.malloc(64 << 10)
trim = heap._malloc_trim
def racing():  # the other thread frees right after this trim
    trim()
    while theirs:
        libc.free(theirs.pop())
heap._malloc_trim = racing
for b in mine:
    libc.free(b)
before = resident(); heap.release(); print((before - resident()) >> 20)
"""
    assert int(_in_fresh_process(code)) >= 48


def test_large_arrays_are_mapped_and_behave_as_before() -> None:
    """Values, dtype and shape kept; writable, writes surviving `unmap_resident`; small and object arrays and views
    of mapped ones are left as they are."""
    from robokit import heap

    values = np.arange(heap.MAP_ABOVE // 8 * 3, dtype=np.float64).reshape(-1, 3)
    held = heap.mapped(values)
    assert heap.is_mapped(held) and held.shape == values.shape and held.dtype == values.dtype
    np.testing.assert_array_equal(held, values)
    held[5, 1] = -1.0
    heap.unmap_resident()
    assert held[5, 1] == -1.0 and held[6, 1] == values[6, 1]
    view = held[2:]
    assert heap.mapped(view) is view
    small = np.arange(10)
    assert heap.mapped(small) is small
    objects = np.array(["a"] * heap.MAP_ABOVE, dtype=object)
    assert heap.mapped(objects) is objects


def test_row_spool_keeps_long_series_in_a_mapped_file() -> None:
    """Rows past MAP_ABOVE bytes end up mapped, equal to what was appended (the partial last block included, and
    rows appended after a first `array()`); a short series stays in memory; a row that does not fit raises and
    does not count."""
    from robokit import heap

    rows = np.arange(heap.MAP_ABOVE // 8 + 1000, dtype=np.float64).reshape(-1, 2) / 3
    spool = heap.RowSpool(2)
    for row in rows[:-7]:
        spool.append(row)
    first = spool.array()
    assert heap.is_mapped(first) and first.shape == (len(rows) - 7, 2)
    np.testing.assert_array_equal(first, rows[:-7])
    for row in rows[-7:]:
        spool.append(row)
    with pytest.raises(ValueError):
        spool.append([1.0, 2.0, 3.0])
    assert len(spool) == len(rows)
    np.testing.assert_array_equal(spool.array(), rows)
    np.testing.assert_array_equal(first, rows[:-7])  # an earlier array keeps its rows
    short = heap.RowSpool(3)
    short.append((1.0, 2.0, 3.0))
    assert not heap.is_mapped(short.array()) and short.array().tolist() == [[1.0, 2.0, 3.0]]
    assert heap.RowSpool(4).array().shape == (0, 4)
    empty = heap.RowSpool(0)  # a JointState without joints: rows of no values
    for _ in range(heap.MAP_ABOVE // 8 + 1):
        empty.append([])
    assert empty.array().shape == (heap.MAP_ABOVE // 8 + 1, 0)


def test_row_spool_extends_and_reads_back_in_blocks() -> None:
    """Rows added in bulk across block boundaries read back in order, in blocks of at most the size asked, from the
    file and from memory alike."""
    from robokit import heap

    rows = np.random.default_rng(0).normal(size=(heap.MAP_ABOVE // 24 * 3 + 11, 3))
    spool = heap.RowSpool(3)
    for part in np.array_split(rows, [5, 9000, 9001]):
        spool.extend(part)
    assert len(spool) == len(rows)
    blocks = list(spool.blocks(4000))
    assert max(map(len, blocks)) <= 4000
    np.testing.assert_array_equal(np.concatenate(blocks), rows)
    np.testing.assert_array_equal(spool.array(), rows)
    small = heap.RowSpool(1)
    small.extend(np.ones((3, 1)))
    assert np.concatenate(list(small.blocks(2))).tolist() == [[1.0]] * 3


def test_take_copies_block_by_block_into_a_mapped_file() -> None:
    """`take` equals fancy indexing (rows reordered or dropped, a column range), maps a large result, and returns
    the array itself when it keeps all of it in order."""
    from robokit import heap

    values = np.arange(heap.MAP_ABOVE // 8 * 7, dtype=np.float64).reshape(-1, 7)
    assert heap.take(values, np.arange(len(values))) is values
    rows = np.concatenate([np.arange(1, len(values), 2), [0]])
    for columns in (slice(None), slice(0, 3), slice(3, 7)):
        taken = heap.take(values, rows, columns)
        np.testing.assert_array_equal(taken, values[rows][:, columns])
        assert heap.is_mapped(taken) and taken.flags.c_contiguous
    small = heap.take(values[:10], np.array([3, 1]), slice(3, 7))
    assert not heap.is_mapped(small) and small.tolist() == values[[3, 1], 3:].tolist()
    strided = values[:, ::2]
    assert heap.take(strided, np.arange(len(strided))) is not strided  # made contiguous


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and madvise")
def test_unmap_resident_gives_back_what_was_read() -> None:
    code = """
import os
import numpy as np
from robokit import heap
def resident():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
held = heap.mapped(np.ones(64 << 17))  # 64 MiB
before = resident(); total = float(held.sum()); read = resident() - before
heap.unmap_resident(); dropped = before + read - resident()
print(read >> 20, dropped >> 20, int(total == held.size and held.sum() == total))
"""
    read, dropped, same = (int(v) for v in _in_fresh_process(code).split())
    assert read >= 60 and dropped >= 60 and same == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and madvise")
def test_unmap_periodically_drops_what_was_read_within_a_period() -> None:
    """However the array is read (here whole, by numpy), its pages leave resident memory within `UNMAP_EVERY`;
    one thread per process however often it is asked for; the values survive."""
    code = """
import os, threading, time
import numpy as np
from robokit import heap
def resident():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
heap.UNMAP_EVERY = 0.05
held = heap.mapped(np.full(64 << 17, 2.0))  # 64 MiB
before = resident(); total = float(held.sum()); read = resident() - before
heap.unmap_periodically(); heap.unmap_periodically()
threads = sum(t.name == "robokit-unmap" for t in threading.enumerate())
deadline = time.monotonic() + 10
while resident() - before > (4 << 20) and time.monotonic() < deadline:
    time.sleep(0.05)
print(threads, read >> 20, (resident() - before) >> 20, int(total == 2.0 * held.size))
"""
    threads, read, left, same = (int(v) for v in _in_fresh_process(code).split())
    assert threads == 1 and read >= 60 and left <= 4 and same == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and madvise")
def test_blocks_hold_one_block_of_a_mapped_array_resident() -> None:
    """Reading a mapped 64 MiB array through `blocks` leaves at most a block resident; a reversed, strided view's
    pages are dropped too; values are read back intact."""
    code = """
import os
import numpy as np
from robokit import heap
def resident():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
held = heap.mapped(np.arange(64 << 17, dtype=np.float64).reshape(-1, 4))  # 64 MiB
heap.unmap_resident(); before = resident()
total = sum(float(b.sum()) for b in heap.blocks(held, 1 << 16)); after = resident() - before  # 2 MiB blocks
view = held[::-2, 1:3]; float(view.sum()); read = resident() - before
heap.drop_pages(view); dropped = read - (resident() - before)
print(after >> 20, read >> 20, dropped >> 20, int(total == float(held.sum())))
"""
    after, read, dropped, same = (int(v) for v in _in_fresh_process(code).split())
    assert after <= 4 and read >= 60 and dropped >= 60 and same == 1


def test_joined_maps_large_results_and_falls_back_to_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks joined in a mapped file when large, in memory when small or when no file can be made (the blocks are
    made again), the values the same."""
    from robokit import heap

    n = heap.MAP_ABOVE // 8 * 2
    blocks = lambda: (np.arange(a, min(a + 1000, n)) for a in range(0, n, 1000))  # noqa: E731
    large = heap.joined(blocks, np.dtype(np.int64), (n,))
    assert heap.is_mapped(large) and large.tolist() == list(range(n))
    small = heap.joined(lambda: iter([np.arange(3), np.arange(3, 5)]), np.dtype(np.int64), (5,))
    assert not heap.is_mapped(small) and small.tolist() == [0, 1, 2, 3, 4]
    assert heap.joined(lambda: iter([]), np.dtype(np.int64), (0, 3)).shape == (0, 3)

    def no_file(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(heap, "_file_array", no_file)
    unmapped = heap.joined(blocks, np.dtype(np.int64), (n,))
    assert not heap.is_mapped(unmapped) and unmapped.tolist() == list(range(n))


def test_ints_keep_a_long_index_in_a_mapped_file() -> None:
    """Values appended one at a time come back in order as int64 (extremes kept), mapped once past `MAP_ABOVE`; a
    value past int64 raises OverflowError and adds nothing."""
    from robokit import heap

    ints = heap.Ints()
    assert len(ints) == 0 and ints.array().shape == (0,)
    values = [-(1 << 63), (1 << 63) - 1, *range(heap.MAP_ABOVE // 8 * 3)]
    for v in values:
        ints.append(v)
    with pytest.raises(OverflowError):
        ints.append(1 << 63)
    out = ints.array()
    assert len(ints) == len(values) and out.dtype == np.int64 and heap.is_mapped(out) and out.tolist() == values
    assert ints.array() is out  # asked again: the same mapping, not another file descriptor
    ints.append(7)
    assert ints.array().tolist() == [*values, 7]
    few = heap.Ints()
    for v in (3, 1, 2):
        few.append(v)
    assert few.array().tolist() == [3, 1, 2] and not heap.is_mapped(few.array())


def test_trim_gives_back_pyarrows_freed_pages_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyarrow allocates with its own allocator (mimalloc or jemalloc), which keeps freed pages past malloc_trim."""
    import types

    from robokit import heap

    released: list[bool] = []
    pool = types.SimpleNamespace(release_unused=lambda: released.append(True))
    monkeypatch.setitem(sys.modules, "pyarrow", types.SimpleNamespace(default_memory_pool=lambda: pool))
    heap.trim()
    assert released == [True]
    monkeypatch.setitem(sys.modules, "pyarrow", types.ModuleType("pyarrow"))  # another thread is importing it
    heap.trim()
