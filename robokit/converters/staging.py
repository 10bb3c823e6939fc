"""Atomic outputs: a writer fills a hidden sibling folder that is renamed into place only when complete."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from robokit.errors import ConversionError


@contextmanager
def staged_dir(final: Path, overwrite: bool = False) -> Iterator[Path]:
    """Yield an empty temporary folder beside `final`; on success it replaces `final`, on error it is removed."""
    if final.exists() and not overwrite:
        raise ConversionError(f"{final}: already exists (pass overwrite to replace it)")
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.partial-", dir=final.parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if final.exists():
        shutil.rmtree(final)
    tmp.rename(final)
