"""Viam sequence dataset writer (`--to viam-sequence`): `<dataset-id>.zip` of three Parquet files + images.

One sequence per episode. binary_data.parquet has a row per image of every selected camera (images under
`binary_data/<binary-data-id><ext>`, JPEG/PNG bytes as recorded); tabular_data.parquet a row per sample of
every other stream, its `payload` the JSON Viam uses for readings: numeric streams
`{"readings": {name: value}, "unit": ...}` (NaN as null), poses `{"pose": {x, y, z, qx, qy, qz, qw}, ...}`
in the `frame` convention, events `{"event": text}`; sequences.parquet a row per episode with its time
window (`start_at`/`end_at`, as the export names what Viam's API calls start_time/end_time), tags and task
(the task label) and traceability. Timestamps are `timestamp[us, tz=UTC]` as Viam documents them, or ns with
`time_unit=ns`. Nothing is resampled: each resource keeps its own rate.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from robokit import frames
from robokit.converters.options import WriterOptions
from robokit.converters.registry import ExtraOption, WriteResult
from robokit.converters.staging import staged_dir
from robokit.converters.streaming import Encoded, EpisodeContext, accepted, write_streaming
from robokit.converters.viam.layout import (
    BINARY_TABLE,
    IMAGE_METHOD,
    SEQUENCE_DATA_DIR,
    SEQUENCES_TABLE,
    TABLES,
    TABULAR_TABLE,
    TIME_UNITS,
    ns_per,
    resource,
)
from robokit.converters.viam.records import (
    DATASET_ID,
    IMAGE_FORMAT,
    PART_ID,
    Ids,
    check_cameras,
    export_ids,
    image_records,
    labels,
    trace,
)
from robokit.timeline import Episode, EventStream, ImageStream, NumericStream, PoseStream, Stream
from robokit.timeline.detections import is_detection_channel

ONLY_PARQUET = ExtraOption("only_parquet", bool, False, "Write the zip of Parquet files only, without the images.")
TIME_UNIT = ExtraOption("time_unit", str, "us", "Timestamp unit: us (Viam's schema) or ns (lossless).", TIME_UNITS)
_BOX = pa.struct([("label", pa.string()), ("confidence", pa.float64()), ("x_min", pa.float64()),
                  ("y_min", pa.float64()), ("x_max", pa.float64()), ("y_max", pa.float64())])
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed member times: the same export gives the same bytes
_CLASS = pa.struct([("label", pa.string()), ("confidence", pa.float64())])


def schemas(unit: str) -> dict[str, pa.Schema]:
    """The three tables' schemas (Viam's documented columns, plus binary_data_id and robokit's own)."""
    ts = pa.timestamp(unit, tz="UTC")
    common = [("sequence_id", pa.string()), ("timestamp", ts), ("part_id", pa.string()),
              ("component_name", pa.string()), ("method_name", pa.string())]
    return {
        BINARY_TABLE: pa.schema([*common, ("binary_data_id", pa.string()), ("path", pa.string()),
                                 ("classifications", pa.list_(_CLASS)), ("bounding_boxes", pa.list_(_BOX))]),
        TABULAR_TABLE: pa.schema([*common, ("payload", pa.string())]),
        SEQUENCES_TABLE: pa.schema([("sequence_id", pa.string()), ("tags", pa.list_(pa.string())),
                                    ("start_at", ts), ("end_at", ts), ("task", pa.string()),
                                    ("robokit.episode_id", pa.string()), ("robokit.source", pa.string()),
                                    ("robokit.segment", pa.list_(pa.int64())),
                                    ("robokit.segment_version", pa.string())]),
    }


def _json_rows(values: np.ndarray) -> list[list[float | None]]:
    """Rows of a float array with non-finite values as None (JSON null)."""
    rows = values.astype(object)
    rows[~np.isfinite(values)] = None
    out: list[list[float | None]] = rows.tolist()
    return out


def payloads(stream: Stream, frame: str) -> list[str] | None:
    """The JSON payload of each sample of a non-image stream (None: a kind tabular data cannot hold)."""
    if isinstance(stream, NumericStream):
        unit = {"unit": stream.unit} if stream.unit else {}
        names = list(stream.names)
        rows = _json_rows(stream.values)
        if len(set(names)) == len(names):
            return [json.dumps({"readings": dict(zip(names, r, strict=True)), **unit}) for r in rows]
        return [json.dumps({"readings": r, **unit}) for r in rows]
    if isinstance(stream, PoseStream):
        pose = frames.convert_pose_stream(stream, frame)
        extra = {"parent_frame": pose.parent_frame, "child_frame": pose.child_frame, "convention": pose.convention,
                 "static": pose.static, "is_camera": pose.is_camera}
        keys = ("x", "y", "z", "qx", "qy", "qz", "qw")
        rows = _json_rows(np.hstack([pose.translation, pose.quaternion]))
        return [json.dumps({"pose": dict(zip(keys, r, strict=True)), **extra}) for r in rows]
    if isinstance(stream, EventStream):
        return [json.dumps({"event": v}) for v in stream.values]
    return None


@dataclass(frozen=True)
class _Plan:
    """What every episode's encoding shares: the options, the IDs, the time unit and the tables' schemas."""

    options: WriterOptions
    ids: Ids
    unit: str
    schemas: dict[str, pa.Schema]
    with_files: bool


@dataclass(frozen=True)
class _Sequence:
    """One episode's share of the export: its binary_data rows and image files, tabular tables, sequence row."""

    binary: pa.Table
    images: list[tuple[str, bytes]]  # (path in the export, bytes)
    tabular: list[pa.Table]
    sequence: dict[str, Any]


class ViamSequenceWriter:
    """`--to viam-sequence`: a Viam sequence dataset export at `<out>/viam-sequence/`."""

    name = "viam-sequence"
    description = "Viam sequence dataset (<dataset-id>.zip of binary/tabular/sequences Parquet + binary_data/)"
    extra_options = (ONLY_PARQUET, DATASET_ID, PART_ID, IMAGE_FORMAT, TIME_UNIT)

    def check(self, format_dir: Path) -> list[str]:
        """Read it as a training script does (JSON lines / Parquet, pandas when installed) and with robokit."""
        from robokit.converters.viam.check import check_sequence

        return check_sequence(format_dir)

    def write(self, episodes: Sequence[Episode], out_dir: Path, options: WriterOptions) -> WriteResult:
        return write_streaming(self, episodes, out_dir, options)

    def plan(self, episodes: Sequence[Episode], options: WriterOptions) -> _Plan:
        unit = options.value(TIME_UNIT)
        ids = export_ids(episodes, options)
        check_cameras(episodes, options)
        return _Plan(options, ids, unit, schemas(unit), not options.value(ONLY_PARQUET))

    def encode(self, ctx: EpisodeContext, plan: _Plan) -> Encoded:
        """The episode's rows of the three tables and its image files (unless only the tables are wanted)."""
        episode, sequence_id = ctx.episode, plan.ids.sequences[ctx.index]
        warnings: list[str] = []
        binary, images = _binary(episode, plan, sequence_id, warnings)
        tabular = _tabular(episode, plan, sequence_id, warnings)
        data = _Sequence(binary, images, tabular, _sequence_row(episode, plan, sequence_id))
        return Encoded(ctx.index, episode.id, data, binary.num_rows, warnings=warnings)

    def assemble(self, parts: Iterable[Encoded], out_dir: Path, plan: _Plan) -> WriteResult:
        """The three tables stream episode by episode into Parquet, then go into the zip."""
        result = WriteResult()
        with staged_dir(out_dir / self.name, overwrite=plan.options.overwrite) as root:
            tables = root / ".tables"
            tables.mkdir()
            writers = {name: pq.ParquetWriter(tables / name, schema) for name, schema in plan.schemas.items()}
            sequences: list[dict[str, Any]] = []
            try:
                for part in accepted(self.name, parts, result):
                    seq: _Sequence = part.data
                    for path, data in seq.images:
                        (root / path).parent.mkdir(parents=True, exist_ok=True)
                        (root / path).write_bytes(data)
                    result.episode_files[part.episode_id] = [path for path, _ in seq.images]
                    writers[BINARY_TABLE].write_table(seq.binary)
                    for table in seq.tabular:
                        writers[TABULAR_TABLE].write_table(table)
                    sequences.append(seq.sequence)
                writers[SEQUENCES_TABLE].write_table(pa.Table.from_pylist(sequences, plan.schemas[SEQUENCES_TABLE]))
            finally:
                for w in writers.values():
                    w.close()
            with zipfile.ZipFile(root / f"{plan.ids.dataset}.zip", "w", zipfile.ZIP_STORED) as zf:
                for name in TABLES:  # stored: Parquet is compressed already, and members stay seekable
                    zf.writestr(zipfile.ZipInfo(name, _ZIP_TIME), (tables / name).read_bytes())  # no mtimes
            shutil.rmtree(tables)
        result.files = sorted(p.relative_to(out_dir / self.name).as_posix()
                              for p in (out_dir / self.name).rglob("*") if p.is_file())
        return result


def _times(ns: np.ndarray | list[int], unit: str) -> pa.Array:
    """UTC timestamps in the export's unit (truncated when that is coarser than ns)."""
    ticks = np.asarray(ns, dtype=np.int64) // ns_per(unit)
    return pa.array(ticks, type=pa.timestamp(unit, tz="UTC"))


def _binary(episode: Episode, plan: _Plan, sequence_id: str, warnings: list[str]
            ) -> tuple[pa.Table, list[tuple[str, bytes]]]:
    """One episode's binary_data rows and its image files (path in the export, bytes)."""
    classes = [{"label": t, "confidence": None} for t in labels(episode, plan.options)]
    rows: list[dict[str, Any]] = []
    images: list[tuple[str, bytes]] = []
    for r in image_records(episode, plan.options, warnings, with_data=plan.with_files):
        binary_id = r.binary_data_id(plan.ids, sequence_id)
        path = f"{SEQUENCE_DATA_DIR}/{binary_id}{r.extension}"
        if r.data is not None:
            images.append((path, r.data))
        boxes = None if r.boxes is None else [
            {"label": b.label, "confidence": b.confidence, "x_min": b.x_min, "y_min": b.y_min,
             "x_max": b.x_max, "y_max": b.y_max} for b in r.boxes]
        rows.append({"sequence_id": sequence_id, "timestamp": r.timestamp_ns // ns_per(plan.unit),
                     "part_id": plan.ids.part, "component_name": r.component, "method_name": IMAGE_METHOD,
                     "binary_data_id": binary_id, "path": path, "classifications": classes,
                     "bounding_boxes": boxes})
    return pa.Table.from_pylist(rows, plan.schemas[BINARY_TABLE]), images


def _tabular(episode: Episode, plan: _Plan, sequence_id: str, warnings: list[str]) -> list[pa.Table]:
    """One table per non-image stream (detections travel with their images instead)."""
    out = []
    for name, stream in episode.streams.items():
        if isinstance(stream, ImageStream) or is_detection_channel(name) or not len(stream):
            continue
        payload = payloads(stream, plan.options.frame)
        if payload is None:
            warnings.append(f"episode {episode.id}: {name} ({stream.kind}) has no tabular form")
            continue
        component, method = resource(name)
        n = len(stream)
        out.append(pa.table({
            "sequence_id": pa.array([sequence_id] * n, pa.string()), "timestamp": _times(stream.timestamps, plan.unit),
            "part_id": pa.array([plan.ids.part] * n, pa.string()),
            "component_name": pa.array([component] * n, pa.string()),
            "method_name": pa.array([method] * n, pa.string()), "payload": pa.array(payload, pa.string()),
        }, schema=plan.schemas[TABULAR_TABLE]))
    return out


def _sequence_row(episode: Episode, plan: _Plan, sequence_id: str) -> dict[str, Any]:
    t = trace(episode)
    per = ns_per(plan.unit)
    tags = labels(episode, plan.options)
    return {"sequence_id": sequence_id, "tags": list(tags), "start_at": episode.start_ns // per,
            "end_at": episode.end_ns // per, "task": (tags or ("",))[0],
            "robokit.episode_id": episode.id, "robokit.source": t["source"],
            "robokit.segment": [int(v) for v in t["segment"]], "robokit.segment_version": t["segment_version"]}


VIAM_SEQUENCE = ViamSequenceWriter()
