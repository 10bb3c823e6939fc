"""Viam dataset exports as timeline episodes: binary (`dataset.jsonl` + files) and sequence (zip of Parquet).

A binary export gives one episode per sequence robokit wrote (its `robokit.sequence_id`), else one per
machine part; each `component_name` is a camera, bounding boxes become `<camera>/detections` events (pixels)
and classification labels the episode's tasks. A sequence export gives one episode per row of
sequences.parquet, joined on `sequence_id`: images per component, tabular payloads per component and
method (numeric readings, robokit's poses and events). Nothing is aligned: the resampler matches times.

Paths that escape the export folder (`..`, absolute elsewhere; also zip members) are refused with a
SourceError. A missing image file is skipped: the episode warns and lists it as a skipped topic with the count.
"""

from __future__ import annotations

import json
import math
import zipfile
from collections import defaultdict
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from robokit.converters.viam.layout import (
    BINARY_TABLE,
    DATA_DIR,
    JSONL,
    ROBOKIT_KEY,
    SEQUENCES_TABLE,
    TABLES,
    TABULAR_TABLE,
    check_member,
    component_image_channel,
    export_file,
    ns_per,
    parse_time,
    reading_channel,
)
from robokit.digest import source_digest
from robokit.errors import SourceError
from robokit.ros.fields import UnsupportedMessage
from robokit.ros.pixels import COMPRESSED_TYPES, encoded_bytes, probe
from robokit.sources.registry import ReadOptions
from robokit.timeline import (
    Episode,
    EpisodeMeta,
    EventStream,
    Frame,
    ImageStream,
    NumericStream,
    PoseStream,
    SkippedTopic,
    Stream,
    StreamOrigin,
)
from robokit.timeline.detections import Box, detection_channel, encode_boxes
from robokit.timeline.streams import sort_timestamps

Loaded = tuple[dict[str, Stream], list[SkippedTopic], list[str]]
Location = Path | str  # a file on disk, or a member of the export's zip
_POSE_KEYS = ("x", "y", "z", "qx", "qy", "qz", "qw")


# --- images ---------------------------------------------------------------------------------------------


class ImageFiles:
    """A FrameSource over image files (or zip members): JPEG/PNG bytes read on demand, one at a time."""

    def __init__(self, files: Sequence[Location], archive: Path | None, label: str) -> None:
        self._files = list(files)
        self._archive = archive
        self._label = label

    def __len__(self) -> int:
        return len(self._files)

    def iter_frames(self, positions: Iterable[int]) -> Generator[Frame, None, None]:
        archive: zipfile.ZipFile | None = None
        try:
            for p in positions:
                loc = self._files[int(p)]
                if isinstance(loc, Path):
                    data = loc.read_bytes()
                else:
                    if archive is None:
                        assert self._archive is not None
                        archive = zipfile.ZipFile(self._archive)
                    data = archive.read(loc)
                try:
                    fmt, data = encoded_bytes(SimpleNamespace(data=data, format=str(loc)))
                except UnsupportedMessage as err:
                    raise SourceError(f"{self._label}: {loc} is not a JPEG/PNG image ({err})") from err
                yield Frame(fmt, data=data)
        finally:
            if archive is not None:
                archive.close()


@dataclass(frozen=True)
class _Image:
    """One image row: capture time, where its file is (None: missing), its name as written, its boxes."""

    timestamp: int
    file: Location | None
    name: str
    boxes: list[dict[str, Any]] | None


def _camera(component: str, images: list[_Image], archive: Path | None, msgtype: str, label: str) -> Loaded:
    """A component's image stream, and its `<camera>/detections` when it has boxes (normalised → pixels)."""
    channel = component_image_channel(component)
    origin = StreamOrigin(component, msgtype, "log")
    skipped: list[SkippedTopic] = []
    warnings: list[str] = []
    present = [im for im in images if im.file is not None]
    missing = len(images) - len(present)
    if missing:
        first = next(im.name for im in images if im.file is None)
        warnings.append(f"{component}: {missing} of {len(images)} image files missing, skipped (first: {first})")
        skipped.append(SkippedTopic(component, msgtype, "image file missing", missing))
    if not present:
        return {}, skipped, warnings
    files = ImageFiles([im.file for im in present if im.file is not None], archive, f"{label} {component}")
    try:
        with closing(files.iter_frames([0])) as first_frame:
            data = next(first_frame).data
        width, height, encoding, fmt = probe(SimpleNamespace(data=data, format=""), COMPRESSED_TYPES[0])
    except (SourceError, OSError, ValueError) as err:
        skipped.append(SkippedTopic(component, msgtype, f"unreadable image: {err}", len(present)))
        return {}, skipped, warnings
    ts, keep, dropped = sort_timestamps(np.array([im.timestamp for im in present], dtype=np.int64))
    if dropped:
        warnings.append(f"{component}: {dropped} image(s) with duplicate timestamps dropped")
    streams: dict[str, Stream] = {channel: ImageStream(
        channel, ts, origin=origin, source=files, positions=keep, width=width, height=height, encoding=encoding,
        format=fmt)}
    group, _, kind = channel.partition("/")
    boxed = [present[int(k)] for k in keep if present[int(k)].boxes]
    if kind == "rgb" and boxed:
        values = tuple(encode_boxes([_pixels(b, width, height) for b in im.boxes or ()]) for im in boxed)
        name = detection_channel(group)
        streams[name] = EventStream(name, np.array([im.timestamp for im in boxed], dtype=np.int64), values,
                                    origin=origin)
    return streams, skipped, warnings


def _pixels(box: Mapping[str, Any], width: int, height: int) -> Box:
    """A normalised Viam box (sequence `x_min`… or binary `x_min_normalized`…) in pixels."""
    def get(key: str) -> float:
        value = box.get(key, box.get(f"{key}_normalized"))
        return float(value) if value is not None else math.nan

    label = box.get("label", box.get("annotation_label"))
    confidence = box.get("confidence")
    return Box(str(label or ""), get("x_min") * width, get("y_min") * height, get("x_max") * width,
               get("y_max") * height, None if confidence is None else float(confidence))


def _merge(parts: Sequence[Loaded]) -> Loaded:
    streams: dict[str, Stream] = {}
    skipped: list[SkippedTopic] = []
    warnings: list[str] = []
    for s, k, w in parts:
        streams.update(s)
        skipped.extend(k)
        warnings.extend(w)
    return streams, skipped, warnings


# --- binary datasets ------------------------------------------------------------------------------------


@dataclass
class _Group:
    """The JSON lines of one episode of a binary export."""

    key: str
    robokit: dict[str, Any]
    part_id: str
    images: dict[str, list[_Image]] = field(default_factory=lambda: defaultdict(list))
    labels: dict[str, None] = field(default_factory=dict)


def _binary_line(line: str, where: str, root: Path, trusted: bool) -> tuple[dict[str, Any], _Image]:
    try:
        obj = json.loads(line)
        if not isinstance(obj, dict) or not isinstance(obj.get("image_path"), str):
            raise ValueError("not a JSON object with an image_path")
        ts = parse_time(str(obj.get("timestamp", "")))
    except ValueError as err:
        raise SourceError(f"{where}: not a Viam dataset line ({err})") from err
    path = export_file(obj["image_path"], root, where, anchor=DATA_DIR, trusted=trusted)
    boxes = obj.get("bounding_box_annotations") or []
    if not isinstance(boxes, list) or not all(isinstance(b, dict) for b in boxes):
        raise SourceError(f"{where}: bounding_box_annotations must be a list of objects")
    return obj, _Image(ts, path if path.is_file() else None, obj["image_path"], list(boxes) or None)


def read_binary(jsonl: Path, trusted: bool = False) -> list[Episode]:
    """Episodes of a binary dataset file; image paths must stay inside its folder unless `trusted`."""
    groups: dict[str, _Group] = {}
    try:
        with jsonl.open(encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                obj, image = _binary_line(line, f"{jsonl}:{number}", jsonl.parent, trusted)
                rk = obj[ROBOKIT_KEY] if isinstance(obj.get(ROBOKIT_KEY), dict) else {}
                part = str(obj.get("part_id") or "")
                key = str(rk.get("sequence_id") or part or "dataset")
                group = groups.setdefault(key, _Group(key, rk, part))
                group.images[str(obj.get("component_name") or "camera")].append(image)
                for label in obj.get("classification_annotations") or ():
                    if isinstance(label, dict):
                        group.labels[str(label.get("annotation_label", ""))] = None
    except OSError as err:
        raise SourceError(f"{jsonl}: cannot read ({err.strerror or err})") from err
    digest = source_digest([jsonl])
    episodes = []
    for g in groups.values():
        tags = {"sequence_id": g.key, "part_id": g.part_id,
                **{k: v if isinstance(v, str) else json.dumps(v) for k, v in g.robokit.items()
                   if k not in ("sequence_id", "episode_id")}}
        meta = EpisodeMeta(source_uri=f"{jsonl.resolve()}#sequence={g.key}",
                           episode_id=str(g.robokit.get("episode_id") or g.key), source_version=digest,
                           source_format="viam-binary", tasks=tuple(t for t in g.labels if t), tags=tags)
        episodes.append(Episode(meta, loader=partial(_load_binary, g, str(jsonl))))
    return episodes


def _load_binary(group: _Group, label: str) -> Loaded:
    return _merge([_camera(c, images, None, "viam/binary", label) for c, images in group.images.items()])


# --- sequence datasets ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SequenceExport:
    """Where a sequence export is: its folder (paths are relative to it) and its tables, in a zip or on disk."""

    root: Path
    tables: Mapping[str, Path] = field(default_factory=dict)  # table name → file, when not in `archive`
    archive: Path | None = None
    members: frozenset[str] = frozenset()  # the zip's member names
    trusted: bool = False  # absolute paths (a training job's /gcs/ files) are opened as they are

    @property
    def label(self) -> str:
        return str(self.archive or self.root)

    def has(self, name: str) -> bool:
        return name in self.members if self.archive is not None else name in self.tables

    @contextmanager
    def table(self, name: str) -> Iterator[IO[bytes] | Path]:
        """A table's file (a zip member stays in the zip, read through a seekable handle)."""
        if self.archive is None:
            yield self.tables[name]
            return
        with zipfile.ZipFile(self.archive) as zf, zf.open(name) as f:
            yield f

    def rows(self, name: str, sequence_id: str | None = None, columns: list[str] | None = None) -> pa.Table:
        """A table's rows (of one sequence: row groups of others are skipped by their statistics)."""
        filters = [("sequence_id", "=", sequence_id)] if sequence_id is not None else None
        try:
            with self.table(name) as source:
                return pq.read_table(source, columns=columns, filters=filters)
        except (OSError, KeyError, ValueError, pa.ArrowException) as err:
            raise SourceError(f"{self.label}: cannot read {name} ({err})") from err


def _zip_export(path: Path) -> SequenceExport | None:
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    except (OSError, zipfile.BadZipFile) as exc:
        if (path.parent / "binary_data").is_dir():  # beside its images: a damaged sequence export, say so
            raise SourceError(f"{path}: damaged Viam sequence export (not a readable zip: {exc})") from exc
        return None
    if not {BINARY_TABLE, SEQUENCES_TABLE} <= set(names):
        return None
    return SequenceExport(path.parent, archive=path, members=frozenset(names))


def sequence_exports(path: Path) -> list[SequenceExport]:
    """The sequence exports at `path`: a zip, a folder of zips, or a folder with the three Parquet files."""
    if path.is_file():
        found = _zip_export(path) if path.suffix == ".zip" else None
        return [found] if found else []
    if path.is_dir() and all((path / t).is_file() for t in (BINARY_TABLE, SEQUENCES_TABLE)):
        return [SequenceExport(path, {t: path / t for t in TABLES if (path / t).is_file()})]
    if path.is_dir():
        return [e for z in sorted(path.glob("*.zip")) if (e := _zip_export(z)) is not None]
    return []


def _ns(column: pa.ChunkedArray) -> np.ndarray:
    """int64 ns UTC of a timestamp column of any unit (naive values are taken as UTC)."""
    unit = column.type.unit if pa.types.is_timestamp(column.type) else "ns"
    return np.asarray(column.cast(pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64) * ns_per(unit)


def read_sequence(export: SequenceExport) -> list[Episode]:
    """One lazy episode per row of sequences.parquet; every image path is checked before anything loads."""
    for name in export.members:
        check_member(name, export.label)
    table = export.rows(SEQUENCES_TABLE)
    sequences = table.select([f.name for f in table.schema if not pa.types.is_timestamp(f.type)]).to_pylist()
    known = {str(s["sequence_id"]) for s in sequences}
    paths = export.rows(BINARY_TABLE, columns=["sequence_id", "path"])
    orphans = 0
    for sid, path in zip(paths.column("sequence_id").to_pylist(), paths.column("path").to_pylist(), strict=True):
        export_file(str(path), export.root, f"{export.label} {BINARY_TABLE}", trusted=export.trusted)
        orphans += sid not in known
    digest = source_digest([export.archive] if export.archive else list(export.tables.values()))
    episodes = []
    for i, s in enumerate(sequences):
        sid = str(s["sequence_id"])
        rk = {k.removeprefix("robokit."): v for k, v in s.items() if k.startswith("robokit.")}
        tags = {"sequence_id": sid, **{k: v if isinstance(v, str) else json.dumps(v) for k, v in rk.items()
                                       if k != "episode_id" and v is not None}}
        task = s.get("task")
        meta = EpisodeMeta(source_uri=f"{Path(export.label).resolve()}#sequence={sid}",
                           episode_id=str(rk.get("episode_id") or sid), source_version=digest,
                           source_format="viam-sequence", tasks=(str(task),) if task else tuple(s.get("tags") or ()),
                           tags=tags)
        warnings = [f"{orphans} binary_data rows belong to no sequence in {SEQUENCES_TABLE}; ignored"] \
            if orphans and i == 0 else []
        warnings += [f"{export.label}: Parquet member {name!r} is none of {', '.join(TABLES)}; ignored (damaged?)"
                     for name in sorted(export.members) if name.endswith(".parquet") and name not in TABLES]
        episodes.append(Episode(meta, loader=partial(_load_sequence, export, sid), warnings=warnings))
    return episodes


def _need(table: pa.Table, columns: tuple[str, ...], where: str) -> pa.Table:
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise SourceError(f"{where}: no column {', '.join(missing)} (has {', '.join(table.column_names)})")
    return table


def _load_sequence(export: SequenceExport, sid: str) -> Loaded:
    images: dict[str, list[_Image]] = defaultdict(list)
    binary = _need(export.rows(BINARY_TABLE, sid), ("timestamp", "component_name", "path"),
                   f"{export.label} {BINARY_TABLE}")
    times = _ns(binary.column("timestamp"))
    boxes = binary.column("bounding_boxes").to_pylist() if "bounding_boxes" in binary.column_names else [None] * len(
        times)
    for t, component, path, b in zip(times.tolist(), binary.column("component_name").to_pylist(),
                                     binary.column("path").to_pylist(), boxes, strict=True):
        disk = export_file(str(path), export.root, export.label, trusted=export.trusted)
        file: Location | None = disk if disk.is_file() else str(path) if str(path) in export.members else None
        images[str(component)].append(_Image(t, file, str(path), b or None))
    parts = [_camera(c, ims, export.archive, "viam/binary_data", export.label) for c, ims in images.items()]
    if export.has(TABULAR_TABLE):
        tabular = _need(export.rows(TABULAR_TABLE, sid), ("timestamp", "component_name", "method_name", "payload"),
                        f"{export.label} {TABULAR_TABLE}")
        parts.append(_tabular(tabular))
    return _merge(parts)


def _tabular(table: pa.Table) -> Loaded:
    """Streams of one sequence's readings, one per (component, method)."""
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    components = table.column("component_name").to_pylist()
    methods = table.column("method_name").to_pylist()
    for i, key in enumerate(zip(components, methods, strict=True)):
        groups[(str(key[0]), str(key[1] or ""))].append(i)
    times = _ns(table.column("timestamp"))
    payloads = table.column("payload").to_pylist()
    streams: dict[str, Stream] = {}
    skipped: list[SkippedTopic] = []
    warnings: list[str] = []
    for (component, method), rows in groups.items():
        channel = reading_channel(component, method)
        origin = StreamOrigin(f"{component}.{method}" if method else component, "viam/tabular", "log")
        try:
            parsed = [json.loads(payloads[i]) for i in rows]
            stream = _reading_stream(channel, times[rows], parsed, origin)
        except (ValueError, TypeError, KeyError, AttributeError) as err:
            skipped.append(SkippedTopic(origin.topic, origin.msgtype, f"unreadable payload: {err}", len(rows)))
            continue
        if stream is None:
            skipped.append(SkippedTopic(origin.topic, origin.msgtype, "no numeric readings", len(rows)))
            continue
        ts, keep, dropped = sort_timestamps(stream.timestamps)
        if dropped:
            warnings.append(f"{origin.topic}: {dropped} reading(s) with duplicate timestamps dropped")
        streams[channel] = stream.take(keep, ts)
    return streams, skipped, warnings


def _reading_stream(channel: str, times: np.ndarray, payloads: list[Any], origin: StreamOrigin) -> Stream | None:
    """The stream of one (component, method): robokit poses and events, else numeric readings (None: none)."""
    first = payloads[0]
    pose = first.get("pose")
    if isinstance(pose, dict) and all(k in pose for k in _POSE_KEYS):
        values = np.array([[_number(p["pose"][k]) for k in _POSE_KEYS] for p in payloads], dtype=np.float64)
        return PoseStream(channel, times, values[:, :3], values[:, 3:], parent_frame=str(first.get("parent_frame", "")),
                          child_frame=str(first.get("child_frame", "")), convention=str(first.get("convention", "ros")),
                          static=bool(first.get("static", False)), is_camera=bool(first.get("is_camera", False)),
                          origin=origin)
    if set(first) == {"event"}:
        return EventStream(channel, times, tuple(str(p["event"]) for p in payloads), origin=origin)
    names = [n for n, _ in _flatten(_readings(first))]
    if not names:
        return None
    index = {n: j for j, n in enumerate(names)}
    values = np.full((len(payloads), len(names)), np.nan)
    for i, p in enumerate(payloads):
        for n, v in _flatten(_readings(p)):
            if n in index:
                values[i, index[n]] = v
    unit = first.get("unit")
    return NumericStream(channel, times, values, tuple(names), unit if isinstance(unit, str) else "", origin=origin)


def _readings(payload: dict[str, Any]) -> Any:
    """The values of a payload: its `readings` (a sensor's), else the one field it has, else all of it."""
    if isinstance(payload.get("readings"), dict | list):
        return payload["readings"]
    if len(payload) == 1:
        return next(iter(payload.values()))
    return payload


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, float]]:
    """Numeric leaves (null → NaN) by dotted path; strings are not readings."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _flatten(v, f"{prefix}{k}.")]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _flatten(v, f"{prefix}{i}.")]
    if value is None or isinstance(value, int | float):
        return [(prefix[:-1] or "value", _number(value))]
    return []


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


# --- the reader -----------------------------------------------------------------------------------------


def binary_jsonl(path: Path) -> Path | None:
    """The dataset file of a binary export at `path` (the .jsonl, or its folder), else None."""
    candidate = path / JSONL if path.is_dir() else path
    if candidate.suffix != ".jsonl" or not candidate.is_file():
        return None
    try:
        with candidate.open(encoding="utf-8") as f:
            line = next((ln for ln in f if ln.strip()), "")
        obj = json.loads(line)
    except (OSError, ValueError):
        return None
    return candidate if isinstance(obj, dict) and "image_path" in obj else None


class ViamReader:
    """Viam dataset exports: binary (`dataset.jsonl`) and sequence (`<dataset-id>.zip` or its Parquet files)."""

    name = "viam"
    description = "Viam dataset export (dataset.jsonl + data/, or <dataset-id>.zip of Parquet files)"

    def sniff(self, path: Path) -> bool:
        return binary_jsonl(path) is not None or bool(sequence_exports(path))

    def read(self, path: Path, options: ReadOptions) -> list[Episode]:
        jsonl = binary_jsonl(path)
        if jsonl is not None:
            return read_binary(jsonl)
        return [e for export in sequence_exports(path) for e in read_sequence(export)]


VIAM_READER = ViamReader()
