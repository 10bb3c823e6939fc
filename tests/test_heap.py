from __future__ import annotations

import subprocess
import sys

import pytest


def _in_fresh_process(code: str) -> str:
    """In a process of its own: the cap applies to the whole process, and must come before its threads."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


def test_arena_cap_and_trim_run_in_a_fresh_process() -> None:
    assert _in_fresh_process("from robokit import heap; heap.limit_arenas(); heap.trim(); print('ok')") == "ok\n"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc and /proc")
def test_release_returns_freed_memory_only_past_the_slack() -> None:
    """64 MiB freed under a live block (so glibc cannot shrink its heap's top): `release` gives it back once it
    passes `SLACK`, and does nothing while less is kept."""
    code = """
import ctypes, os
from robokit import heap
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
def resident():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
heap.limit_arenas()
heap.release()  # measures the baseline
blocks = [libc.malloc(64 << 10) for _ in range(1024)]
for b in blocks:
    ctypes.memset(b, 1, 64 << 10)
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
    assert small == 0
    assert large >= 48
