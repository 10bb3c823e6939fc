from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from robokit import digest
from robokit.digest import file_digest, source_digest


def _edit_middle_keeping_size_and_mtime(path: Path) -> None:
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


def test_same_size_edit_in_the_middle_changes_the_digest(tmp_path: Path) -> None:
    bag = tmp_path / "big.mcap"
    bag.write_bytes(os.urandom(5 << 20))  # more than the first and last MiB the old digest read
    before = source_digest([bag])
    _edit_middle_keeping_size_and_mtime(bag)
    assert source_digest([bag]) != before


def test_memo_serves_unchanged_files_and_misses_in_place_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    monkeypatch.setattr(digest, "_RACY_NS", 0)  # memoise even a file written just now
    bag = tmp_path / "bag.db3"
    bag.write_bytes(os.urandom(3 << 20))
    os.utime(bag, ns=(1_600_000_000_000_000_000,) * 2)
    time.sleep(0.05)  # the edit below must get a later ctime than the memoised one
    first = file_digest(bag)
    digest._memo.clear()  # the memo on disk alone serves it, without hashing

    def no_hashing(*_: object) -> str:
        raise AssertionError("hashed although memoised")

    with monkeypatch.context() as m:
        m.setattr(digest, "_content", no_hashing)
        assert file_digest(bag) == first
    _edit_middle_keeping_size_and_mtime(bag)
    assert file_digest(bag) != first


def test_names_are_part_of_the_digest(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x.parquet").write_bytes(b"same")
    (tmp_path / "b" / "x.parquet").write_bytes(b"same")
    assert source_digest([tmp_path / "a" / "x.parquet"], tmp_path) != source_digest([tmp_path / "b" / "x.parquet"],
                                                                                   tmp_path)


def test_segments_hashed_in_parallel_give_the_defined_digest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    monkeypatch.setattr(digest, "_SEGMENT", 1 << 20)  # four segments, the last one short, hashed in threads
    data = os.urandom((3 << 20) + 12345)
    (tmp_path / "bag.mcap").write_bytes(data)
    parts = b"".join(hashlib.sha256(data[i:i + (1 << 20)]).digest() for i in range(0, len(data), 1 << 20))
    assert file_digest(tmp_path / "bag.mcap") == hashlib.sha256(parts).hexdigest()[:32]
