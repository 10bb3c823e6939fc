from __future__ import annotations

import json
from pathlib import Path

import pytest

from robokit.errors import OptionError
from robokit.export.manifest import parse_time_ns, read_manifest, shard


def _write(path: Path, lines: list[object]) -> Path:
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines))
    return path


def test_manifest_items_resolve_relative_paths(tmp_path: Path) -> None:
    m = _write(tmp_path / "m.jsonl", [
        {"data_path": "a.mcap", "episode_id": "a", "task": "pick", "tags": ["x"],
         "segment": {"start": "2026-01-01T00:00:01Z", "end": 2_000_000_000_000_000_000}},
        "",
        {"data_path": "sub/b.bag", "colour": "red"},
    ])
    items, warnings = read_manifest(m)
    assert [i.data_path for i in items] == [tmp_path / "a.mcap", tmp_path / "sub" / "b.bag"]
    assert items[0].segment == (1_767_225_601_000_000_000, 2_000_000_000_000_000_000)
    assert items[0].tags == {"x": ""} and items[1].line == 3
    assert warnings == [f"{m}:3: unknown key(s) ignored: colour"]


@pytest.mark.parametrize(("line", "message"), [
    ("{not json", r"m.jsonl:1: not valid JSON"),
    (json.dumps({"episode_id": "x"}), "string data_path"),
    (json.dumps({"data_path": "../x.bag"}), "escapes the manifest folder"),
    (json.dumps({"data_path": "x", "segment": [5, 1]}), "not after start"),
    (json.dumps({"data_path": "x", "segment": ["2026-01-01T00:00:00", 9]}), "no timezone"),
])
def test_malformed_lines_name_the_line(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        read_manifest(_write(tmp_path / "m.jsonl", [line]))


def test_outside_allowed_and_duplicates_refused(tmp_path: Path) -> None:
    items, _ = read_manifest(_write(tmp_path / "m.jsonl", [{"data_path": "../x.bag"}]), allow_outside=True)
    assert items[0].data_path == tmp_path.parent / "x.bag"
    dup = [{"data_path": "a", "episode_id": "e"}, {"data_path": "b", "episode_id": "e"}]
    with pytest.raises(OptionError, match="duplicate episode_id"):
        read_manifest(_write(tmp_path / "d.jsonl", dup))


def test_shard_is_a_deterministic_partition(tmp_path: Path) -> None:
    items, _ = read_manifest(_write(tmp_path / "m.jsonl", [{"data_path": f"{i}.bag"} for i in range(10)]))
    parts = [shard(items, f"{i}/3") for i in range(3)]
    assert sorted(p.data_path.name for part in parts for p in part) == sorted(f"{i}.bag" for i in range(10))
    assert shard(items, "1/3") == parts[1]
    with pytest.raises(OptionError):
        shard(items, "3/3")


def test_parse_time() -> None:
    assert parse_time_ns("1970-01-01T00:00:01.5Z", "x") == 1_500_000_000
    with pytest.raises(OptionError):
        parse_time_ns(True, "x")
