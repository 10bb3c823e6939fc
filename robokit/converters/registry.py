"""Format registry: a format name maps to a writer, imported only when asked for; the readers are listed here too.

A new format is one folder `robokit/converters/<format>/` plus one `Format` line in `_BUILTIN`, naming its
writers and readers (`robokit.sources` sniffs with the readers); third-party writers register through the
`robokit.converters` entry-point group, readers through `robokit.readers`.

Format options: a writer declares each one as a module-level `ExtraOption` (name, type, default, help, and
`choices` or a `low`..`high` range) listed in its `extra_options`; that one declaration feeds `convert --help`,
checks `--name value`, `--config` keys and `export(options=...)` before any work (`checked_options`), and the
writer reads the typed value with `options.value(OPTION)` (never `options.extra`, never its own parsing or default).
"""

from __future__ import annotations

import importlib
import math
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

from robokit.errors import OptionError
from robokit.limits import MAX_TEXT
from robokit.timeline import Episode

if TYPE_CHECKING:
    from robokit.converters.options import WriterOptions
    from robokit.converters.scene.model import Scene


@dataclass(frozen=True)
class Format:
    """One format folder `robokit/converters/<folder>/`: its writers (format name → "module:attribute" in the
    folder) and its readers (attributes of its `reader` module), all imported only when used, so reading a
    format never loads its writer."""

    folder: str
    writers: Mapping[str, str] = field(default_factory=dict)
    readers: tuple[str, ...] = ()


# One line per format folder; readers sniff in this order.
_BUILTIN = (
    Format("mcap", {"mcap": "writer:MCAP"}, ("MCAP_READER",)),
    Format("rosbag", readers=("ROSBAG2_READER", "ROSBAG1_READER")),
    Format("lerobot", {"lerobot": "writer:LEROBOT"}, ("LEROBOT_READER",)),
    Format("rlds", {"rlds": "writer:RLDS"}, ("RLDS_READER",)),
    Format("viam", {"viam-binary": "binary:VIAM_BINARY", "viam-sequence": "sequence:VIAM_SEQUENCE"}, ("VIAM_READER",)),
    Format("hdf5", readers=("HDF5_READER",)),
    Format("webdataset", {"webdataset": "writer:WEBDATASET"}),
    Format("usd", {"usd": "writer:USD"}),
    Format("mjcf", {"mjcf": "writer:MJCF"}),
    Format("reasoning", {"cosmos-reason-v1.0": "writer:COSMOS_REASON", "tao-vl-reason-v1.0": "writer:TAO_VL_REASON"}),
    Format("rerun", {"rerun": "writer:RERUN"}),
)
_instances: dict[str, Converter] = {}
T = TypeVar("T")


def builtin_readers() -> list[str]:
    """The built-in readers as "module:attribute", in sniffing order."""
    return [f"robokit.converters.{f.folder}.reader:{attr}" for f in _BUILTIN for attr in f.readers]


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
class ExtraOption(Generic[T]):
    """A declared option: a format's own (it lands in `WriterOptions.extra`, read with `WriterOptions.value`) or
    one of the common `WriterOptions` fields; the CLI shows it in `convert --help`.

    `T` is the type writers receive (annotate `ExtraOption[str | None]` when the default is None); `type` the
    one text is parsed into. Numbers are bounded by `low`..`high` (inclusive; `low` itself excluded when
    `above`), text by `choices`; `check` (returning the value, or raising OptionError) adds what those cannot
    say. `parse` applies them all: it is the one place option values are parsed (booleans included).
    """

    name: str
    type: type
    default: T
    help: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    above: bool = False
    check: Callable[[Any], Any] | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def valid(self) -> str:
        """The valid values in words, e.g. "an integer from 0 to 63" (for messages and `--help`)."""
        if self.choices:
            return "one of " + ", ".join(self.choices)
        kind = {bool: "true or false", int: "an integer", float: "a number"}.get(self.type, "text")
        if self.low is not None and self.high is not None:
            span = f"above {self.low:g} up to" if self.above else f"from {self.low:g} to"
            return f"{kind} {span} {self.high:g}"
        return kind

    def parse(self, value: Any) -> T:
        """`value` (text from the shell, or a config/API value) as this option's type, checked; OptionError if not."""
        parsed: T = self._parse(value)
        return parsed

    def describe(self, default: str = "") -> str:
        """The `--help` text: what it is, the valid values, the default (`default` words it when not a value)."""
        shown = default or ("none" if self.default is None else str(self.default).lower()
                            if isinstance(self.default, bool) else str(self.default))
        return f"{self.help} ({self.valid}; default: {shown})."

    def _parse(self, value: Any) -> Any:
        if value is None and self.default is None:
            return None
        numeric = self.type in (int, float) and _number(value, float) is not None
        bad = OptionError(f"{self.name} {value if numeric else repr(value)}: expected {self.valid}")
        if self.type is bool:
            if isinstance(value, str) and value.lower() in _TRUTH:
                return _TRUTH[value.lower()]
            if not isinstance(value, bool):
                raise bad
            return value
        if self.type in (int, float):
            parsed: Any = _number(value, self.type)
            if parsed is None or (self.low is not None and (parsed < self.low or (self.above and parsed == self.low))) \
                    or (self.high is not None and parsed > self.high):
                raise bad
        elif not isinstance(value, str) or (self.choices and value not in self.choices):
            raise bad
        else:
            parsed = check_text(self.name, value)
        return self.check(parsed) if self.check else parsed


_TRUTH = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def _number(value: Any, kind: type) -> int | float | None:
    """A finite float, or an int (integral values only), from a number or its text; None when it is neither."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
        if not math.isfinite(number):
            return None
        if kind is float:
            return number
        return int(value) if isinstance(value, str) else int(number) if number.is_integer() else None
    except (ValueError, OverflowError):
        return None


def check_text(name: str, value: str, limit: int = MAX_TEXT) -> str:
    """Text options are valid UTF-8 without control characters and at most `limit` characters long."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise OptionError(f"{name}: not valid UTF-8 text") from None
    if any(unicodedata.category(c) == "Cc" for c in value):
        raise OptionError(f"{name} {value!r}: control characters are not allowed")
    if len(value) > limit:
        raise OptionError(f"{name}: {len(value)} characters, at most {limit} allowed")
    return value


class Writer(Protocol):
    """What every writer has: it writes into `<out>/<name>/` and declares its options.

    `check` loads a written folder with the format's real consumer and returns the problems found
    (an empty list means it passed); `robokit check` calls it. A writer may also define
    `check_options(options)`, raising OptionError for combinations its `extra_options` cannot express
    (e.g. a crf beyond the chosen codec's range); it runs before any recording is read.
    """

    name: str
    description: str
    extra_options: tuple[ExtraOption[Any], ...]

    def check(self, format_dir: Path) -> list[str]: ...


@runtime_checkable
class EpisodeWriter(Writer, Protocol):
    """A writer of recordings (`kind` "episodes"); streaming ones also have `plan`/`encode`/`assemble`."""

    def write(self, episodes: Sequence[Episode], out_dir: Path, options: WriterOptions) -> WriteResult: ...


@runtime_checkable
class SceneWriter(Writer, Protocol):
    """A writer of simulator scenes (`kind` "scene"), given recordings only as camera trajectories."""

    def write_scene(self, scene: Scene, out_dir: Path, options: WriterOptions) -> WriteResult: ...


@runtime_checkable
class AnnotatedSceneWriter(Writer, Protocol):
    """A writer of completed (annotated) scene folders (`kind` "annotated-scenes"): it packages the clips and
    entries `robokit.converters.reasoning.write_annotated` cut once for every such format."""

    clip_files: bool

    def package(self, pkg: Any, folder: Path) -> list[str]: ...


Converter = AnnotatedSceneWriter | SceneWriter | EpisodeWriter  # a registered writer, of one of the kinds


def kind_of(writer: object) -> str:
    """The kind of input `writer` takes ("annotated-scenes", "scene" or "episodes"), by the protocol it implements
    (the most specific first: scene writers may also have a `write` that explains what to give)."""
    if isinstance(writer, AnnotatedSceneWriter):
        return "annotated-scenes"
    if isinstance(writer, SceneWriter):
        return "scene"
    if isinstance(writer, EpisodeWriter):
        return "episodes"
    raise OptionError(f"{type(writer).__name__} is not a writer: it has no write, write_scene or package method "
                      "(and name, description, extra_options, check)")


def register_converter(name: str, converter: Converter) -> None:
    kind_of(converter)
    _instances[name] = converter


def _specs() -> dict[str, str]:
    specs = {name: f"robokit.converters.{f.folder}.{where}" for f in _BUILTIN for name, where in f.writers.items()}
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
        writer = getattr(importlib.import_module(module), attr)
        kind_of(writer)
        _instances[name] = writer
    return _instances[name]


def checked_options(formats: Sequence[str], options: WriterOptions) -> WriterOptions:
    """`options` with every format option of `formats` parsed against its declaration, then each format's
    own cross-checks run (an optional `check_options(options)`): usage errors surface before any work."""
    declared: dict[str, list[ExtraOption[Any]]] = {}
    for name in formats:
        for opt in get_converter(name).extra_options:
            declared.setdefault(opt.name, []).append(opt)
    extra = dict(options.extra)
    for key, value in options.extra.items():
        for opt in declared.get(key, ()):
            extra[key] = opt.parse(value)
    checked = replace(options, extra=extra)
    for name in formats:
        check = getattr(get_converter(name), "check_options", None)
        if check is not None:
            check(checked)
    return checked
