"""ROS 1 bags opened through an index parsed once per file: every segment and format rescans a camera, and
rosbags parses a bag's whole index (an entry per message) each time it opens one."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path
from typing import Any

from rosbags.rosbag1 import Reader as Reader1

from robokit.sources.perfile import PerFile

_PARSED: PerFile[Any] = PerFile(kept=4)  # the parsed readers of the last few bags


@contextmanager
def opened(path: Path) -> Iterator[Any]:
    """A rosbags reader of `path` on a file handle of its own, sharing the index parsed when the file was first
    opened (`PerFile`); rosbags' errors propagate as they are."""
    with path.open("rb") as f:
        template = _PARSED.get(f, lambda: _parse(path))
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
