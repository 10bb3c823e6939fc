"""Resident memory of a process tree, for the benchmarks that report memory summed over every process."""

from __future__ import annotations

import psutil


def tree_rss(proc: psutil.Process) -> int:
    """Resident bytes of `proc` and all its descendants (processes that exit meanwhile count as 0)."""
    try:
        tree = [proc, *proc.children(recursive=True)]
    except psutil.Error:  # the process, or a child being listed, has just exited
        return 0
    total = 0
    for p in tree:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            continue
    return total
