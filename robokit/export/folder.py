"""Guards of an export folder: one export at a time, leftovers of killed runs removed, inputs never replaced,
and after `--overwrite` nothing of the earlier export that this one did not write."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from robokit.converters.staging import sweep_stale
from robokit.errors import RobokitError
from robokit.export.items import Log

LOCK = ".robokit.lock"
_FOLDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class DestinationError(RobokitError):
    """`--out` cannot be written now: another export holds it, or `--overwrite` would replace an input."""


@contextmanager
def exclusive(dest: Path, log: Log) -> Iterator[None]:
    """Hold `dest`'s export lock (refusing when another export holds it), then remove stale staging folders.

    The lock is `flock` on `<dest>/.robokit.lock`: the kernel releases it when its holder exits, even by kill -9.
    """
    dest.mkdir(parents=True, exist_ok=True)
    fd = os.open(dest / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            raise DestinationError(f"{dest} is being written by another robokit export ({holder}); wait for it "
                                   "to finish or choose another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}\n".encode(), 0)
        for name in sweep_stale(dest):
            log(f"removed {name} left behind by an interrupted export")
        yield
    finally:
        os.close(fd)


def _within(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def check_inputs(inputs: Iterable[Path], replaced: Iterable[Path]) -> None:
    """DestinationError when an input lies inside a folder this export would replace."""
    folders = [f for f in replaced if f.exists()]
    for path in inputs:
        hit = next((f for f in folders if _within(path, f)), None)
        if hit is not None:
            raise DestinationError(f"input {path} lies inside {hit}, which --overwrite would replace; "
                                   "move it or choose another --out")


def earlier_formats(previous: dict[str, Any], dest: Path, formats: Iterable[str]) -> list[str]:
    """Format folders the earlier export in `dest` recorded (its export.json) that this one does not write."""
    recorded = previous.get("formats")
    if not isinstance(recorded, dict):
        return []
    wanted = set(formats)
    return sorted(name for name in recorded if isinstance(name, str) and name not in wanted
                  and _FOLDER_NAME.fullmatch(name) and (dest / name).is_dir() and not (dest / name).is_symlink())


def remove_formats(dest: Path, names: Iterable[str], log: Log) -> None:
    """Remove format folders of an earlier export, saying so."""
    for name in names:
        shutil.rmtree(dest / name)
        log(f"removed {name}/ of the earlier export (--overwrite replaces the whole export)")
