"""Export manifests: JSON Lines, one recording per line, validated with line numbers."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from robokit.errors import OptionError

KNOWN_KEYS = ("data_path", "episode_id", "task", "segment", "tags")


@dataclass(frozen=True)
class ManifestItem:
    """One recording to export, with the overrides its manifest line gives."""

    data_path: Path
    episode_id: str | None = None
    task: str | None = None
    segment: tuple[int, int] | None = None
    tags: dict[str, str] = field(default_factory=dict)
    line: int = 0
    allow_outside: bool = False  # dataset files may be symlinks to outside their folder

    @property
    def label(self) -> str:
        return f"{self.data_path}" + (f" (manifest line {self.line})" if self.line else "")


def parse_time_ns(value: Any, where: str) -> int:
    """Nanoseconds since the epoch from an int (ns) or an ISO-8601 UTC string."""
    if isinstance(value, bool):
        raise OptionError(f"{where}: time {value!r} is neither ns nor ISO-8601")
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise OptionError(f"{where}: time {value} does not fit in 64-bit nanoseconds")
        return value
    if isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise OptionError(f"{where}: time {value!r} is neither ns nor ISO-8601") from exc
        if dt.tzinfo is None:
            raise OptionError(f"{where}: time {value!r} has no timezone; give UTC, e.g. 2026-01-01T00:00:00Z")
        return int(dt.timestamp()) * 1_000_000_000 + dt.microsecond * 1000
    raise OptionError(f"{where}: time {value!r} is neither ns nor ISO-8601")


def _segment(value: Any, where: str) -> tuple[int, int]:
    if isinstance(value, dict):
        start, end = value.get("start"), value.get("end")
    elif isinstance(value, list | tuple) and len(value) == 2:
        start, end = value
    else:
        raise OptionError(f"{where}: segment must be {{\"start\": ..., \"end\": ...}} or [start, end]")
    s, e = parse_time_ns(start, where), parse_time_ns(end, where)
    if s < 0:
        raise OptionError(f"{where}: segment start {s} is before 1970 (times are ns since the epoch, >= 0)")
    if e <= s:
        raise OptionError(f"{where}: segment end {e} is not after start {s}")
    return s, e


def read_manifest(path: Path, allow_outside: bool = False) -> tuple[list[ManifestItem], list[str]]:
    """Items of a manifest and warnings (unknown keys); OptionError on malformed lines."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise OptionError(f"manifest {path}: cannot read ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise OptionError(f"manifest {path}: not UTF-8 text (byte {exc.start})") from exc
    root = path.resolve().parent
    items: list[ManifestItem] = []
    warnings: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        try:
            entry = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise OptionError(f"{where}: not valid JSON ({exc.msg})") from exc
        except RecursionError as exc:
            raise OptionError(f"{where}: JSON nested too deeply") from exc
        if not isinstance(entry, dict) or not isinstance(entry.get("data_path"), str):
            raise OptionError(f"{where}: each line must be an object with a string data_path")
        unknown = sorted(set(entry) - set(KNOWN_KEYS))
        if unknown:
            warnings.append(f"{where}: unknown key(s) ignored: {', '.join(unknown)}")
        data_path = (root / entry["data_path"]).resolve()
        if not allow_outside and not data_path.is_relative_to(root):
            raise OptionError(f"{where}: data_path {entry['data_path']!r} escapes the manifest folder {root} "
                              "(pass --allow-outside to permit it)")
        for key in ("episode_id", "task"):
            if entry.get(key) is not None and not (isinstance(entry[key], str) and entry[key].strip()):
                raise OptionError(f"{where}: {key} must be a non-empty string, got {entry[key]!r}")
        tags = entry.get("tags") or {}
        if isinstance(tags, list) and all(isinstance(t, str) for t in tags):
            tags = {t: "" for t in tags}
        if not isinstance(tags, dict):
            raise OptionError(f"{where}: tags must be an object or a list of strings")
        items.append(ManifestItem(
            data_path=data_path, episode_id=entry.get("episode_id"), task=entry.get("task"),
            segment=_segment(entry["segment"], where) if entry.get("segment") is not None else None,
            tags={str(k): str(v) for k, v in tags.items()}, line=number))
    ids = [i.episode_id for i in items if i.episode_id]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise OptionError(f"manifest {path}: duplicate episode_id(s): {', '.join(dupes)}")
    return items, warnings


def items_from_paths(paths: Iterable[Path]) -> list[ManifestItem]:
    return [ManifestItem(data_path=Path(p)) for p in paths]


def shard(items: list[ManifestItem], spec: str) -> list[ManifestItem]:
    """The deterministic I/N slice (`0/4` … `3/4`): every N-th item starting at I, in manifest order."""
    try:
        i, n = (int(x) for x in spec.split("/"))
    except ValueError as exc:
        raise OptionError(f"shard {spec!r}: expected I/N, e.g. 0/4") from exc
    if n < 1 or not 0 <= i < n:
        raise OptionError(f"shard {spec!r}: need 0 <= I < N")
    return items[i::n]
