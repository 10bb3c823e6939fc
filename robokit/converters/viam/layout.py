"""What robokit's Viam writers and readers share: file and column names, resource naming, UTC time text, paths.

Binary dataset (what `viam dataset export` writes for a binary dataset, and a training job's
`--dataset_file`): `dataset.jsonl`, one JSON object per image (`image_path`, `classification_annotations`,
`bounding_box_annotations`, `timestamp` as Go's `time.Time.String()`, `binary_data_id`, `part_id`,
`component_name`), and the files under `data/`. `image_path` starts with the destination as it was given.

Sequence dataset: `<dataset-id>.zip` holding `binary_data.parquet`, `tabular_data.parquet` and
`sequences.parquet`, with the images beside the zip under `binary_data/<binary-data-id><ext>`; `path` in
binary_data.parquet is relative to the export folder. Timestamps are `timestamp[us, tz=UTC]` as Viam
documents them (robokit can also write ns).

Resources: a camera channel is a component (`front/rgb` ↔ `front`, `front/depth` ↔ `front_depth`); any other
channel `<group>/<field>` is component `<group>` with method `<field>` (a Viam CamelCase method such as
`Readings` or `JointPositions` reads back as `<component>/readings`, `<component>/joint_positions`).
"""

from __future__ import annotations

import calendar
import os
import re
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from robokit.errors import SourceError

JSONL = "dataset.jsonl"
DATA_DIR = "data"
SEQUENCE_DATA_DIR = "binary_data"
BINARY_TABLE = "binary_data.parquet"
TABULAR_TABLE = "tabular_data.parquet"
SEQUENCES_TABLE = "sequences.parquet"
TABLES = (BINARY_TABLE, TABULAR_TABLE, SEQUENCES_TABLE)
IMAGE_METHOD = "GetImages"
ROBOKIT_KEY = "robokit"  # robokit's own fields in a JSON line: sequence id, episode id, traceability
TIME_UNITS = ("us", "ns")
_NS_PER = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
_DEPTH_SUFFIX = "_depth"


def component_image_channel(component: str) -> str:
    """The image channel of a camera component: `front` → `front/rgb`, `front_depth` → `front/depth`."""
    if component.endswith(_DEPTH_SUFFIX) and len(component) > len(_DEPTH_SUFFIX):
        return f"{component[: -len(_DEPTH_SUFFIX)]}/depth"
    return f"{component}/rgb"


def resource(channel: str) -> tuple[str, str]:
    """(component, method) of a non-image channel: `joints/position` → (`joints`, `position`), `task` → (`task`, ``)."""
    group, _, field = channel.partition("/")
    return group, field


def reading_channel(component: str, method: str) -> str:
    """The channel of a component's method: (`joints`, `position`) → `joints/position`, `Readings` → `readings`."""
    field = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", method).lower()
    return f"{component}/{field}" if field else component


def slug(text: str) -> str:
    """`text` as a safe path component (letters, digits, `.`, `_`, `-`)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "_"


def ns_per(unit: str) -> int:
    """Nanoseconds per tick of an Arrow timestamp unit."""
    return _NS_PER[unit]


def _fraction(ns: int) -> str:
    frac = ns % 1_000_000_000
    return f".{frac:09d}".rstrip("0") if frac else ""


def go_time(ns: int) -> str:
    """Go's `time.Time.String()` of a UTC time, as Viam writes `timestamp`: `2026-01-01 00:00:00.0333 +0000 UTC`."""
    day = datetime.fromtimestamp(ns // 1_000_000_000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
    return f"{day}{_fraction(ns)} +0000 UTC"


def rfc3339(ns: int) -> str:
    """Go's RFC3339Nano of a UTC time (`2026-01-01T00:00:00.0333Z`), as Viam prefixes exported file names."""
    day = datetime.fromtimestamp(ns // 1_000_000_000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{day}{_fraction(ns)}Z"


_TIME = re.compile(
    r"\s*(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?\s*(Z|[+-]\d{2}:?\d{2})?"
    r"(?:\s+[A-Za-z]+)?(?:\s+m=[+-][\d.]+)?\s*"
)


def parse_time(text: str) -> int:
    """ns since the epoch of Go `time.Time.String()` or RFC 3339 text (no offset: UTC); ValueError otherwise."""
    m = _TIME.fullmatch(text)
    if m is None:
        raise ValueError(f"not a timestamp: {text!r}")
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    zone = m[8] or "Z"
    if zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        hh, mm = int(zone[1:3]), int(zone[-2:])
        seconds -= sign * (hh * 3600 + mm * 60)
    return seconds * 1_000_000_000 + int((m[7] or "").ljust(9, "0"))


def check_member(name: str, where: str) -> None:
    """Refuse an archive member or table path that is absolute or climbs out with `..`."""
    p = PurePosixPath(name.replace("\\", "/"))
    if p.is_absolute() or ".." in p.parts or re.match(r"[A-Za-z]:[\\/]", name):
        raise SourceError(f"{where}: path {name!r} escapes the export folder (absolute or '..'); refusing to read it")


def export_file(value: str, root: Path, where: str, *, anchor: str | None = None, trusted: bool = False) -> Path:
    """The file a path in an export names, which must lie inside the export folder `root`.

    Relative paths are relative to `root`; with `anchor` (the binary layout's `data`) the destination
    prefix before that folder is dropped, since Viam writes paths starting with the destination as given.
    Absolute paths must point inside `root`, unless `trusted` (a training job's own `/gcs/` paths).
    Raises SourceError for a path that escapes.
    """
    p = PurePosixPath(value.replace("\\", "/"))
    if p.is_absolute():
        if trusted:
            return Path(value)
        norm, base = Path(os.path.normpath(value)), Path(os.path.normpath(root.absolute()))
        if base in norm.parents:
            return norm
        raise SourceError(f"{where}: path {value!r} is outside the export folder {root}; refusing to read it")
    parts = p.parts
    starts = [i for i, part in enumerate(parts) if part == anchor] or [0]
    tail = parts[starts[0]:]
    if ".." in tail or not tail:
        raise SourceError(f"{where}: path {value!r} escapes the export folder (absolute or '..'); refusing to read it")
    if len(starts) == 1:
        return root.joinpath(*tail)
    candidates = [root.joinpath(*parts[i:]) for i in starts]  # the destination itself held a `data` folder
    return next((c for c in candidates if c.is_file()), candidates[-1])
