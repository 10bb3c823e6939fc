"""Values parsed from a file once and shared by every read that comes back to it (a camera is rescanned for
each segment and format; a recording's index is the same each time)."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import IO, Generic, TypeVar

T = TypeVar("T")


class PerFile(Generic[T]):
    """The values parsed from the last `kept` files, keyed by device, inode, size and times (and `extra`): a file
    changed or replaced, even in place, is parsed again."""

    def __init__(self, kept: int) -> None:
        self._kept = kept
        self._values: OrderedDict[tuple[Hashable, ...], T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, f: IO[bytes], parse: Callable[[], T], *extra: Hashable) -> T:
        """The value for open file `f`: kept, else `parse()` (outside the lock: two readers may both parse)."""
        st = os.fstat(f.fileno())
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, *extra)
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        value = parse()
        with self._lock:
            self._values[key] = value
            while len(self._values) > self._kept:
                self._values.popitem(last=False)
        return value
