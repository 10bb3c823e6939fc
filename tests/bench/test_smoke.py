"""Every benchmark script still runs (`--smoke`: tiny sizes, seconds), so a benchmark cannot silently rot."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if not p.name.startswith("_"))  # _*.py: shared helpers


def test_every_script_is_covered() -> None:
    assert len(SCRIPTS) >= 7


@pytest.mark.parametrize("script", SCRIPTS)
def test_smoke(script: str, tmp_path: Path) -> None:
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl"), "TMPDIR": str(tmp_path)}
    run = subprocess.run([sys.executable, str(BENCH / script), "--smoke"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip(), "a benchmark prints its results"
