"""glibc heap settings for robokit's own processes, so resident memory follows what is in use, not what was.

Frames and chunks (hundreds of KiB each) are allocated and freed by many threads: glibc gives each thread an
arena of its own (up to 8 per CPU) and keeps what is freed in them. No-ops on other C libraries.
"""

from __future__ import annotations

import ctypes
import os

ARENAS = 2  # malloc arenas per robokit process (export_memory, 15 s → 120 s: +64 MiB with glibc's 16, +15 with 2)
_M_ARENA_MAX = -8  # mallopt parameter number (malloc.h)
_LIBC = ctypes.CDLL(None) if os.name == "posix" else None


def limit_arenas() -> None:
    """Cap this process's malloc arenas; called first thing in the CLI and in worker processes, never in a host
    program that merely imports robokit."""
    mallopt = getattr(_LIBC, "mallopt", None)
    if mallopt is not None:
        mallopt(_M_ARENA_MAX, ARENAS)


def trim() -> None:
    """Give what the episode's encoders freed back to the system (glibc keeps it in its arenas otherwise, and
    resident memory creeps up episode after episode)."""
    malloc_trim = getattr(_LIBC, "malloc_trim", None)
    if malloc_trim is not None:
        malloc_trim(0)
