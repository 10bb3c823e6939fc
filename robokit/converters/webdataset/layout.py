"""WebDataset shard layout: names, deterministic tar members and their exact on-disk size, npy/npz payloads."""

from __future__ import annotations

import io
import re
import tarfile
import zipfile
from collections.abc import Mapping
from typing import BinaryIO

import numpy as np

from robokit.errors import OptionError

BLOCK = 512
RECORD = 20 * BLOCK  # tar archives are padded to whole records of 20 blocks
INDEX_KIND = "wids-shard-index-v1"
DATASET_JSON = "dataset.json"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]*")
_UNSAFE = re.compile(r"[^A-Za-z0-9_\-]+")
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def shard_prefix(value: object) -> str:
    """The shard name prefix: letters, digits, `_` and `-` (a dot would end a WebDataset key)."""
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise OptionError(f"dataset_name {value!r}: use letters, digits, '_' and '-' (starting with a letter or digit)")
    return value


def shard_name(prefix: str, index: int) -> str:
    return f"{prefix}-{index:06d}.tar"


def index_name(prefix: str) -> str:
    return f"{prefix}.shardindex.json"


def brace_pattern(prefix: str, count: int) -> str:
    """The shard list in brace notation, as `webdataset.WebDataset` takes it."""
    last = shard_name(prefix, count - 1)
    return last if count == 1 else f"{prefix}-{{{0:06d}..{count - 1:06d}}}.tar"


def episode_key(episode_id: str, taken: set[str]) -> str:
    """A unique sample key prefix for an episode: its id with unsafe characters (and dots) replaced."""
    base = _UNSAFE.sub("_", episode_id).strip("_")[:60] or "episode"
    key, n = base, 1
    while key in taken:
        n += 1
        key = f"{base}-{n}"
    taken.add(key)
    return key


def member_size(payload: int) -> int:
    """Bytes a member takes in a USTAR archive: one header block plus the payload padded to blocks."""
    return BLOCK + -(-payload // BLOCK) * BLOCK


def closing_size(content: int) -> int:
    """Bytes added when an archive of `content` member bytes is closed: two zero blocks, then record padding."""
    return -(-(content + 2 * BLOCK) // RECORD) * RECORD - content


def write_member(out: BinaryIO, name: str, data: bytes) -> int:
    """One regular-file member with mtime 0, uid/gid 0, no owner names, mode 0644; returns the bytes written."""
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode, info.uname, info.gname = len(data), 0, 0o644, "", ""
    out.write(info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict"))
    out.write(data)
    pad = -len(data) % BLOCK
    if pad:
        out.write(b"\0" * pad)
    return member_size(len(data))


def end_archive(out: BinaryIO, content: int) -> None:
    out.write(b"\0" * closing_size(content))


def npy(array: np.ndarray) -> bytes:
    """`.npy` bytes (format 1.0, no pickle)."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()


def npz(arrays: Mapping[str, np.ndarray]) -> bytes:
    """`.npz` bytes with fixed zip timestamps (numpy's own savez stamps the current time)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_TIME)
            info.external_attr = 0o644 << 16
            z.writestr(info, npy(arrays[name]))
    return buf.getvalue()
