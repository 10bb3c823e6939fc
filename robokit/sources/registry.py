"""Reader registry and format sniffing: the content decides the reader, not the extension alone."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator, Mapping
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
_plugins_loaded = False
_builtins: dict[str, Reader] = {}  # "module:attribute" → the reader, once imported


def register_reader(reader: Reader) -> None:
    """Add a reader (plugins call this); later registrations are tried first."""
    _registered.insert(0, reader)


def iter_readers() -> Iterator[Reader]:
    """Every reader in sniffing order: plug-ins first, then the built-ins, each imported only when sniffing reaches
    it (a ROS 2 bag never loads the HDF5 or Viam readers: about 0.1 s of imports)."""
    global _plugins_loaded
    if not _plugins_loaded:
        _registered.extend(ep.load() for ep in entry_points(group="robokit.readers"))
        _plugins_loaded = True
    yield from list(_registered)
    for spec in builtin_readers():
        if spec not in _builtins:
            module, attr = spec.split(":")
            _builtins[spec] = getattr(importlib.import_module(module), attr)
        yield _builtins[spec]


def readers() -> list[Reader]:
    """Every reader, all imported."""
    return list(iter_readers())


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
            reader = next((r for r in iter_readers() if r.sniff(path)), None)
        if reader is None:
            raise SourceError(f"{path}: not a recording robokit can read (expected {describe_expected()})")
        with reading(str(path)):
            episodes.extend(reader.read(path, options))
    return episodes
