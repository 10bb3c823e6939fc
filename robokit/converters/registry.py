"""Converter registry: a format name maps to a writer, imported only when asked for.

A new format is one module under `robokit/converters/` plus one line in `_BUILTIN`;
third-party writers register through the `robokit.converters` entry-point group.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from robokit.errors import OptionError
from robokit.timeline import Episode

if TYPE_CHECKING:
    from robokit.converters.options import WriterOptions

# format name -> "module:attribute" of its Converter. One line per format.
_BUILTIN: dict[str, str] = {
    "lerobot": "robokit.converters.lerobot:LEROBOT",
    "usd": "robokit.converters.usd:USD",
    "mjcf": "robokit.converters.mjcf:MJCF",
    "rlds": "robokit.converters.rlds:RLDS",
    "webdataset": "robokit.converters.webdataset:WEBDATASET",
    "mcap": "robokit.converters.mcap:MCAP",
    "viam-binary": "robokit.converters.viam:VIAM_BINARY",
    "viam-sequence": "robokit.converters.viam:VIAM_SEQUENCE",
}
_instances: dict[str, Converter] = {}


@dataclass
class WriteResult:
    """What a writer produced: files (relative to its format folder), episode and frame counts, warnings.

    `episode_files` names the files holding each episode's samples (files under no episode, such as
    metadata and indexes, are shared); `episode_frames` each episode's frames. Writers that cannot tell
    leave them empty. Scene writers say what they wrote in `contents` (objects, splats, colliders, cameras).
    """

    files: list[str] = field(default_factory=list)
    episodes: int = 0
    frames: int = 0
    warnings: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (episode id, reason)
    episode_files: dict[str, list[str]] = field(default_factory=dict)
    episode_frames: dict[str, int] = field(default_factory=dict)
    contents: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ExtraOption:
    """A format-specific option (it lands in `WriterOptions.extra`); the CLI shows it in `convert --help`."""

    name: str
    type: type
    default: Any
    help: str
    choices: tuple[str, ...] = ()

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


class Converter(Protocol):
    """A writer for one output format, writing into `<out>/<name>/`.

    `consumes` is "episodes" (recordings, via `write`) or "scene" (scenes, via `write_scene`).
    `check` loads a written folder with the format's real consumer and returns the problems found
    (an empty list means it passed); `robokit check` calls it.
    """

    name: str
    description: str
    consumes: str
    extra_options: tuple[ExtraOption, ...]

    def write(self, episodes: Sequence[Episode], out_dir: Path, options: WriterOptions) -> WriteResult: ...

    def check(self, format_dir: Path) -> list[str]: ...


def register_converter(name: str, converter: Converter) -> None:
    _instances[name] = converter


def _specs() -> dict[str, str]:
    specs = dict(_BUILTIN)
    for ep in entry_points(group="robokit.converters"):
        specs.setdefault(ep.name, ep.value)
    return specs


def available() -> list[str]:
    """Every format name robokit can write (built in, registered, or from plugins)."""
    return sorted(set(_specs()) | set(_instances))


def get_converter(name: str) -> Converter:
    """The converter for `name`; OptionError listing the known formats when there is none."""
    if name not in _instances:
        spec = _specs().get(name)
        if spec is None:
            raise OptionError(f"unknown format {name!r}; available: {', '.join(available()) or 'none'}")
        module, attr = spec.split(":")
        _instances[name] = getattr(importlib.import_module(module), attr)
    return _instances[name]
