"""Atomic outputs: a writer fills a hidden sibling folder that is renamed into place only when complete.

Staging folders are named `.<name>.partial-<pid>-<random>`, so a later run can tell those of a killed
process (its pid gone) from those still being filled, and remove them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from robokit.errors import ConversionError


def staging_prefix(name: str) -> str:
    """The prefix of this process's staging folders for `name`."""
    return f".{name}.partial-{os.getpid()}-"


@contextmanager
def staged_dir(final: Path, overwrite: bool = False) -> Iterator[Path]:
    """Yield an empty temporary folder beside `final`; on success it replaces `final`, on error it is removed."""
    if final.exists() and not overwrite:
        raise ConversionError(f"{final}: already exists (pass overwrite to replace it)")
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=staging_prefix(final.name), dir=final.parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if final.exists():
        shutil.rmtree(final)
    tmp.rename(final)


def alive(pid: int) -> bool:
    """Whether process `pid` exists (it may be someone else's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def sweep_stale(folder: Path) -> list[str]:
    """Remove staging folders in `folder` left by processes that are gone (or by unknown ones, when no pid is
    in the name); returns their names. Callers hold the folder's export lock, so no live run is starting one."""
    removed = []
    for path in folder.glob(".*.partial-*") if folder.is_dir() else []:
        pid = path.name.rsplit(".partial-", 1)[1].split("-", 1)[0]
        if pid.isdigit() and (int(pid) == os.getpid() or alive(int(pid))):
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path.name)
    return removed
