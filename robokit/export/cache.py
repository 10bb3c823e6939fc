"""Export cache: a format's output keyed by (source digests, format, options, robokit version).

Entries are complete folders renamed into place, so a killed export never becomes a hit. Entries and the
outputs made from them are independent copies (reflinks where the file system has them), never hard links:
editing an output in place cannot change the cache.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robokit.converters.staging import staged_dir, staging_prefix, sweep_stale
from robokit.digest import default_root


def cache_key(fmt: str, options: dict[str, Any], sources: list[dict[str, Any]], version: str) -> str:
    blob = json.dumps({"format": fmt, "options": options, "sources": sources, "version": version},
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class CacheEntry:
    key: str
    path: Path
    meta: dict[str, Any]

    @property
    def size(self) -> int:
        return sum(f.stat().st_size for f in (self.path / "output").rglob("*") if f.is_file())


_FICLONE = 0x40049409  # Linux ioctl: share the blocks copy-on-write (btrfs, XFS)


def _copy_file(src: str, dst: str) -> None:
    """A reflink when the file system can, else a byte copy; never a hard link."""
    try:
        with open(src, "rb") as fi, open(dst, "wb") as fo:
            fcntl.ioctl(fo.fileno(), _FICLONE, fi.fileno())
    except OSError:
        shutil.copyfile(src, dst)
    shutil.copystat(src, dst)


def _copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, copy_function=_copy_file, dirs_exist_ok=True)


class ExportCache:
    """A folder of entries `<key>/{entry.json, output/}`."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or default_root()

    def get(self, key: str) -> CacheEntry | None:
        path = self.root / key
        try:
            meta = json.loads((path / "entry.json").read_text())
        except (OSError, ValueError):
            return None
        return CacheEntry(key, path, meta) if (path / "output").is_dir() else None

    def materialise(self, entry: CacheEntry, dst: Path) -> None:
        """Place a copy of a cached output at `dst`, replacing what is there only once the copy is complete."""
        with staged_dir(dst, overwrite=True) as tmp:
            _copy_tree(entry.path / "output", tmp)

    def put(self, key: str, output: Path, meta: dict[str, Any]) -> None:
        """Store a copy of a finished output folder under `key`, atomically; an existing entry is kept.

        OSError when the cache cannot take it (full, unwritable): callers warn and carry on.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        if (self.root / key).exists():
            return
        sweep_stale(self.root)
        tmp = Path(tempfile.mkdtemp(prefix=staging_prefix(key), dir=self.root))
        try:
            _copy_tree(output, tmp / "output")
            (tmp / "entry.json").write_text(json.dumps({**meta, "created": time.time()}, indent=2, default=str))
            tmp.rename(self.root / key)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            if not (self.root / key).exists():
                raise

    def entries(self) -> list[CacheEntry]:
        if not self.root.is_dir():
            return []
        found = (self.get(p.name) for p in sorted(self.root.iterdir()) if not p.name.startswith("."))
        return [e for e in found if e is not None]

    def remove(self, key: str | None = None) -> int:
        """Remove one entry (by key or key prefix) or, with None, all; returns how many went."""
        gone = 0
        for entry in self.entries():
            if key is None or entry.key.startswith(key):
                shutil.rmtree(entry.path)
                gone += 1
        sweep_stale(self.root)
        if key is None:
            shutil.rmtree(self.root / ".digests", ignore_errors=True)
        return gone
