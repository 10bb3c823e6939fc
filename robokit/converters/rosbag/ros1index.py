"""ROS 1 bags opened through an index parsed once per file: every segment and format rescans a camera, and
rosbags parses a bag's whole index (an entry per message) each time it opens one."""

from __future__ import annotations

import copy
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path
from typing import Any

from rosbags.rosbag1 import Reader as Reader1

_KEPT = 4  # files whose parsed index is kept
_parsed: OrderedDict[tuple[int, ...], Any] = OrderedDict()
_lock = threading.Lock()


@contextmanager
def opened(path: Path) -> Iterator[Any]:
    """A rosbags reader of `path` on a file handle of its own, sharing the index parsed when the file (same
    device, inode, size and times) was first opened; rosbags' errors propagate as they are."""
    with path.open("rb") as f:
        st = os.fstat(f.fileno())
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        with _lock:
            template = _parsed.get(key)
            if template is not None:
                _parsed.move_to_end(key)
        if template is None:
            template = _parse(path)
            with _lock:
                _parsed[key] = template
                while len(_parsed) > _KEPT:
                    _parsed.popitem(last=False)
        reader = copy.copy(template)  # the index read-only and shared; the file handle and current chunk its own
        reader.bio, reader.current_chunk = f, (-1, BytesIO())
        yield reader  # never `reader.close()`: it would clear the shared index


def _parse(path: Path) -> Any:
    """A reader whose index is parsed, its own file handle closed (copies get theirs)."""
    reader: Any = Reader1(path)
    reader.open()
    bio, reader.bio = reader.bio, None
    bio.close()
    return reader
