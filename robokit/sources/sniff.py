"""Magic-byte checks shared by the readers."""

from __future__ import annotations

from pathlib import Path

MCAP_MAGIC = b"\x89MCAP0\r\n"
ROSBAG1_MAGIC = b"#ROSBAG V2.0"
SQLITE_MAGIC = b"SQLite format 3\x00"


def head(path: Path, n: int = 16) -> bytes:
    """The first `n` bytes of a file (b"" for directories and unreadable files)."""
    if not path.is_file():
        return b""
    try:
        with path.open("rb") as f:
            return f.read(n)
    except OSError:
        return b""


def is_mcap(path: Path) -> bool:
    return head(path, 8) == MCAP_MAGIC


def is_rosbag1(path: Path) -> bool:
    return head(path, 12) == ROSBAG1_MAGIC


def is_sqlite(path: Path) -> bool:
    return head(path, 16) == SQLITE_MAGIC
