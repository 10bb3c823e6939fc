"""What the benchmarks that run robokit's command share: its bytecode compiled as an install has it, and the
resident memory of a process tree (memory is reported summed over every process)."""

from __future__ import annotations

import compileall
from pathlib import Path

import psutil


def compile_robokit() -> None:
    """Compile robokit's modules once, as installing a wheel does: a checkout run under PYTHONDONTWRITEBYTECODE
    would otherwise compile every module it imports from source at each start (about 50 ms of `robokit convert`)."""
    import robokit

    compileall.compile_dir(Path(robokit.__file__).parent, quiet=1)


def tree_rss(proc: psutil.Process) -> int:
    """Resident bytes of `proc` and all its descendants (processes that exit meanwhile count as 0)."""
    return tree_memory(proc)[0]


def tree_memory(proc: psutil.Process) -> tuple[int, int]:
    """`tree_rss`, and how many of those bytes are file-backed (shared libraries' pages, mapped files): the kernel
    may drop those, and how many it maps for a library differs between kernels (whole large folios on newer ones)."""
    try:
        tree = [proc, *proc.children(recursive=True)]
    except psutil.Error:  # the process, or a child being listed, has just exited
        return 0, 0
    total = shared = 0
    for p in tree:
        try:
            info = p.memory_info()
        except psutil.Error:
            continue
        total += info.rss
        shared += getattr(info, "shared", 0)  # Linux only
    return total, shared
