"""Source version digests: every byte of every file, so any edit (even a same-size one) changes the digest.

A file's digest is memoised on disk (beside the export cache, `.digests/`) under its device, inode, size,
mtime and ctime: an edit in place changes ctime, which no tool can set back, so it always misses. Files
changed within the last seconds are not memoised (timestamps are coarser than the clock).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from robokit.errors import SourceError

_BLOCK = 1 << 20
_RACY_NS = 3_000_000_000  # younger files may still change within their timestamp's granularity
_memo: dict[str, str] = {}


def _memo_key(path: Path, st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{path.resolve()}"


def _memo_file(key: str) -> Path:
    from robokit.export.cache import default_root

    return default_root() / ".digests" / hashlib.sha256(key.encode()).hexdigest()[:40]


def _remember(key: str, digest: str) -> None:
    """Keep `digest` in this process and on disk (best effort: an unwritable cache only costs time)."""
    _memo[key] = digest
    target = _memo_file(key)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        with os.fdopen(fd, "w") as f:
            f.write(digest)
        os.replace(tmp, target)
    except OSError:
        pass


def _recall(key: str) -> str | None:
    if key in _memo:
        return _memo[key]
    try:
        digest = _memo_file(key).read_text()
    except OSError:
        return None
    return digest if len(digest) == 32 else None


def file_digest(path: Path) -> str:
    """blake2b-128 of the file's content (hex), memoised per (device, inode, size, mtime, ctime, path)."""
    try:
        st = path.stat()
        key = _memo_key(path, st)
        known = _recall(key)
        if known is not None:
            return known
        started = time.time_ns()
        h = hashlib.blake2b(digest_size=16)
        buf = bytearray(_BLOCK)
        view = memoryview(buf)
        with path.open("rb", buffering=0) as f:
            while n := f.readinto(buf):
                h.update(view[:n])
        after = path.stat()
    except OSError as exc:
        raise SourceError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    digest = h.hexdigest()
    if _memo_key(path, after) == key and max(st.st_mtime_ns, st.st_ctime_ns) < started - _RACY_NS:
        _remember(key, digest)
    return digest


def source_digest(paths: Iterable[Path], root: Path | None = None) -> str:
    """`b2:<hex>` over each file's name (relative to `root` when given) and full-content digest.

    Files are taken in sorted order, so a directory recording or dataset has one digest.
    """
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(paths):
        name = path.relative_to(root).as_posix() if root is not None else path.name
        h.update(f"{name}\0{file_digest(path)}\0".encode())
    return "b2:" + h.hexdigest()
