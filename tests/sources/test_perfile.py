from __future__ import annotations

from pathlib import Path

from robokit.sources.perfile import PerFile


def test_parsed_once_per_file_until_it_changes(tmp_path: Path) -> None:
    paths = [tmp_path / f"{i}.bin" for i in range(3)]
    for p in paths:
        p.write_bytes(b"x")
    cache: PerFile[str] = PerFile(kept=2)
    parsed: list[str] = []

    def get(path: Path, *extra: str) -> str:
        with path.open("rb") as f:
            return cache.get(f, lambda: parsed.append(path.name) or path.name, *extra)

    assert [get(paths[0]), get(paths[0]), get(paths[0], "other")] == ["0.bin"] * 3
    assert parsed == ["0.bin", "0.bin"]  # `extra` is part of the key
    paths[0].write_bytes(b"x")  # rewritten in place, same bytes: new ctime, parsed again
    get(paths[0])
    get(paths[1]), get(paths[2])  # the oldest entries make room
    get(paths[0])
    assert parsed == ["0.bin", "0.bin", "0.bin", "1.bin", "2.bin", "0.bin"]
