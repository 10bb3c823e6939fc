from __future__ import annotations

import subprocess
import sys


def test_arena_cap_and_trim_run_in_a_fresh_process() -> None:
    """In a process of its own: the cap applies to the whole process, and must come before its threads."""
    code = "from robokit.export import heap; heap.limit_arenas(); heap.trim(); print('ok')"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "ok\n"
