"""Reader registry and format sniffing: the content decides the reader, not the extension alone."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Protocol

from robokit.converters.registry import builtin_readers
from robokit.errors import SourceError, reading
from robokit.timeline import Episode


@dataclass(frozen=True)
class ReadOptions:
    """How to read: `mapping` overrides the default topic → channel names; `verify` checks chunk CRCs;
    `allow_outside` lets datasets reach files through symlinks to outside their folder."""

    mapping: Mapping[str, str] = field(default_factory=dict)
    verify: bool = True
    allow_outside: bool = False


class Reader(Protocol):
    """One recording format: `sniff` looks at the content, `read` returns lazy episodes.

    Plug-ins register one with `register_reader`, or through the `robokit.readers` entry-point group
    (`name = "module:attribute"`); both are tried before the built-in readers.
    """

    name: str
    description: str

    def sniff(self, path: Path) -> bool: ...

    def read(self, path: Path, options: ReadOptions) -> list[Episode]: ...


_registered: list[Reader] = []
_loaded = False


def register_reader(reader: Reader) -> None:
    """Add a reader (plugins call this); later registrations are tried first."""
    _registered.insert(0, reader)


def readers() -> list[Reader]:
    global _loaded
    if not _loaded:
        for ep in entry_points(group="robokit.readers"):
            _registered.append(ep.load())
        for spec in builtin_readers():  # the format registry's readers, imported on first use
            module, attr = spec.split(":")
            _registered.append(getattr(importlib.import_module(module), attr))
        _loaded = True
    return list(_registered)


def describe_expected() -> str:
    return ", ".join(r.description for r in readers())


def open_episodes(paths: str | Path | Iterable[str | Path], options: ReadOptions | None = None) -> list[Episode]:
    """Episodes of every recording in `paths` (each sniffed); raises SourceError naming the bad path."""
    if isinstance(paths, str | Path):
        paths = [paths]
    options = options or ReadOptions()
    episodes: list[Episode] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise SourceError(f"{path}: no such file or directory")
        with reading(str(path)):
            reader = next((r for r in readers() if r.sniff(path)), None)
        if reader is None:
            raise SourceError(f"{path}: not a recording robokit can read (expected {describe_expected()})")
        with reading(str(path)):
            episodes.extend(reader.read(path, options))
    return episodes
