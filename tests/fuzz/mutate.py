"""Seeded mutations of one file in a copied seed: byte-level damage, structured (JSON/YAML/JSONL) type
confusion, non-finite numbers, and a deleted file. Every mutation is a pure function of its RNG."""

from __future__ import annotations

import json
import random
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

TEXT_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")
DEEP = "deeply-nested-"  # a marker replaced by nested lists once the document is dumped
# Values a hostile or broken writer puts where a reader expects something else.
WRONG_VALUES: tuple[Any, ...] = (
    -1, 7, 0, 2**63, -(2**63), 1e308, "x", "", None, True, [], {}, [1, 2], {"start": -1}, float("nan"),
    float("inf"), "../../etc/passwd", "{chunk_index.__class__}")


def _bitflip(data: bytearray, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
    return "bitflip"


def _truncate(data: bytearray, rng: random.Random) -> str:
    cut = rng.randrange(len(data))
    del data[cut:]
    return f"truncate@{cut}"


def _zero(data: bytearray, rng: random.Random) -> str:
    start = rng.randrange(len(data))
    n = min(len(data) - start, rng.choice((4, 16, 256, 4096)))
    data[start:start + n] = bytes(n)
    return f"zero@{start}+{n}"


def _duplicate(data: bytearray, rng: random.Random) -> str:
    start = rng.randrange(len(data))
    chunk = data[start:start + rng.choice((8, 64, 1024, 16384))]
    at = rng.randrange(len(data) + 1)
    data[at:at] = chunk
    return f"duplicate@{start}->{at}"


def _huge_length(data: bytearray, rng: random.Random) -> str:
    if len(data) < 8:
        return _bitflip(data, rng)
    at = rng.randrange(len(data) - 8)
    value = rng.choice((b"\xff\xff\xff\xff", b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80", b"\xff" * 8,
                        struct.pack("<Q", 2**40)))
    data[at:at + len(value)] = value
    return f"huge-length@{at}"


def _nan_bytes(data: bytearray, rng: random.Random) -> str:
    if len(data) < 8:
        return _bitflip(data, rng)
    at = rng.randrange(0, len(data) - 8, 4)
    value = rng.choice((struct.pack("<f", float("nan")), struct.pack("<f", float("inf")), struct.pack("<f", 1e38),
                        struct.pack("<d", float("nan")), struct.pack("<d", float("-inf"))))
    data[at:at + len(value)] = value
    return f"nan-bytes@{at}"


BYTE_MUTATIONS: tuple[Callable[[bytearray, random.Random], str], ...] = (
    _bitflip, _truncate, _zero, _duplicate, _huge_length, _nan_bytes)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path into a JSON-like value."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:20]):
            out += _paths(v, (*prefix, i))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    value[path[0]] = _replace(value[path[0]], path[1:], new)
    return value


def _wrong_type(doc: Any, rng: random.Random) -> tuple[Any, str]:
    """`doc` with one value (or the whole document) replaced by a wrong one, or deeply nested."""
    path = rng.choice(_paths(doc))
    roll = rng.random()
    new: Any
    if roll < 0.1:
        new = f"{DEEP}{rng.choice((200, 5000, 100_000))}"
    elif roll < 0.2 and isinstance(doc, dict):
        path = (rng.choice(list(doc)),) if doc else ()
        if path:
            del doc[path[0]]
            return doc, f"delete-key {path}"
        new = None
    else:
        new = rng.choice(WRONG_VALUES)
    return _replace(doc, path, new), f"wrong-type {list(path)}={str(new)[:20]!r}"


def _deepen(text: str) -> str:
    """The text with every DEEP marker replaced by lists nested that deep (too deep for the dumpers)."""
    for depth in (200, 5000, 100_000):
        for quote in ('"', "'", ""):
            text = text.replace(f"{quote}{DEEP}{depth}{quote}", "[" * depth + "]" * depth)
    return text


def mutate_structured(path: Path, rng: random.Random) -> str | None:
    """Type-confuse one JSON/JSONL/YAML document in place; None when the file does not parse."""
    text = path.read_text(errors="replace")
    suffix = path.suffix.lower()
    try:
        if suffix == ".jsonl":
            lines = [json.loads(line) for line in text.splitlines() if line.strip()]
            if not lines:
                return None
            n = rng.randrange(len(lines))
            lines[n], what = _wrong_type(lines[n], rng)
            path.write_text(_deepen("".join(json.dumps(line) + "\n" for line in lines)))
            return f"line {n + 1}: {what}"
        if suffix == ".json":
            doc, what = _wrong_type(json.loads(text), rng)
            path.write_text(_deepen(json.dumps(doc)))
            return what
        doc, what = _wrong_type(yaml.safe_load(text), rng)
        path.write_text(_deepen(yaml.safe_dump(doc, sort_keys=False)))
        return what
    except (ValueError, yaml.YAMLError, RecursionError):
        return None


def mutate_case(root: Path, rng: random.Random, focus: Path | None = None) -> str:
    """Damage one file under `root` (`focus`, when given, four times in five); returns what was done."""
    files = sorted(p for p in root.rglob("*") if p.is_file())
    if not files:
        return "empty"
    target = focus if focus is not None and rng.random() < 0.8 else rng.choice(files)
    rel = target.relative_to(root)
    if len(files) > 1 and rng.random() < 0.05:
        target.unlink()
        return f"{rel}: deleted"
    if target.suffix.lower() in TEXT_SUFFIXES and rng.random() < 0.6:
        what = mutate_structured(target, rng)
        if what is not None:
            return f"{rel}: {what}"
    data = bytearray(target.read_bytes())
    if not data:
        return f"{rel}: empty file"
    what = rng.choice(BYTE_MUTATIONS)(data, rng)
    target.write_bytes(bytes(data))
    return f"{rel}: {what}"
