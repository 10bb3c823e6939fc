"""Source version digests: cheap to compute on large recordings, yet change when the content changes."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

_BLOCK = 1 << 20


def source_digest(paths: Iterable[Path]) -> str:
    """blake2b over each file's name, size, first and last MiB: `b2ht:<hex>` (ht = head+tail).

    Files of a directory recording are digested in sorted order; a full-content hash of multi-GB
    bags would cost more than the conversion itself.
    """
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(paths):
        size = path.stat().st_size
        h.update(path.name.encode() + b"\0" + str(size).encode() + b"\0")
        with path.open("rb") as f:
            h.update(f.read(_BLOCK))
            if size > 2 * _BLOCK:
                f.seek(size - _BLOCK)
                h.update(f.read(_BLOCK))
            elif size > _BLOCK:
                h.update(f.read())
    return "b2ht:" + h.hexdigest()
