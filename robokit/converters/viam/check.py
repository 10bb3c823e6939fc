"""Checks a written Viam export the way training scripts consume it: JSON lines or Parquet (pandas when installed).

Both layouts are also read back with robokit's reader, which refuses escaping paths and counts missing files.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pyarrow as pa

from robokit.converters.consumers import PANDAS
from robokit.converters.viam.layout import BINARY_TABLE, DATA_DIR, JSONL, SEQUENCE_DATA_DIR, TABLES, parse_time
from robokit.errors import RobokitError

_LINE_KEYS = {"image_path": str, "classification_annotations": list, "bounding_box_annotations": list,
              "timestamp": str, "binary_data_id": str, "part_id": str, "component_name": str}
_BOX_KEYS = ("x_min_normalized", "x_max_normalized", "y_min_normalized", "y_max_normalized")
_COLUMNS = {
    "binary_data.parquet": ("sequence_id", "timestamp", "part_id", "component_name", "method_name", "path",
                            "classifications", "bounding_boxes"),
    "tabular_data.parquet": ("sequence_id", "timestamp", "part_id", "component_name", "method_name", "payload"),
    "sequences.parquet": ("sequence_id", "tags", "start_at", "end_at"),
}
_TIME_COLUMNS = {"binary_data.parquet": ("timestamp",), "tabular_data.parquet": ("timestamp",),
                 "sequences.parquet": ("start_at", "end_at")}


def _line_problems(number: int, obj: Any) -> list[str]:
    if not isinstance(obj, dict):
        return [f"line {number}: not a JSON object"]
    problems = [f"line {number}: {key} missing or not a {kind.__name__}"
                for key, kind in _LINE_KEYS.items() if not isinstance(obj.get(key), kind)]
    try:
        parse_time(str(obj.get("timestamp")))
    except ValueError as exc:
        problems.append(f"line {number}: {exc}")
    for box in obj.get("bounding_box_annotations") or ():
        v = [box.get(k) for k in _BOX_KEYS] if isinstance(box, dict) else [None]
        n = [float(x) for x in v if isinstance(x, int | float)]
        if len(n) != 4 or not all(0 <= x <= 1 for x in n) or n[0] > n[1] or n[2] > n[3]:
            problems.append(f"line {number}: bounding box {box} is not normalised min ≤ max in [0, 1]")
    return problems


def check_binary(root: Path) -> list[str]:
    """Problems of a binary export (empty: it passed): every line a Viam image record, every file readable."""
    from robokit.converters.viam.reader import read_binary

    jsonl = root / JSONL
    if not jsonl.is_file():
        return [f"{root}: no {JSONL}"]
    problems: list[str] = []
    lines = 0
    with jsonl.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            try:
                problems += _line_problems(number, json.loads(line))
            except ValueError as exc:
                problems.append(f"line {number}: not JSON ({exc})")
            lines += 1
    if problems:
        return problems
    try:
        episodes = read_binary(jsonl)
        images = sum(len(s) for e in episodes for s in e.cameras.values())
        if (root / DATA_DIR).is_dir():  # else written with only_jsonl
            problems += [w for e in episodes for w in e.warnings if "missing" in w]
            problems += [] if images == lines else [f"{images} readable images for {lines} lines"]
            for e in episodes:
                for cam in e.cameras.values():
                    cam.frame(len(cam) - 1).array()
    except RobokitError as exc:
        problems.append(f"robokit could not read it back: {exc}")
    return problems


def _table_problems(name: str, table: pa.Table) -> list[str]:
    problems = [f"{name}: no column {c}" for c in _COLUMNS[name] if c not in table.column_names]
    for c in _TIME_COLUMNS[name]:
        if c in table.column_names and not (pa.types.is_timestamp(table.schema.field(c).type)
                                            and table.schema.field(c).type.tz == "UTC"):
            problems.append(f"{name}: {c} is {table.schema.field(c).type}, not a UTC timestamp")
    if not PANDAS.available():
        return problems
    import pandas as pd

    frame = table.to_pandas()
    for c in _TIME_COLUMNS[name]:
        if c in frame and not isinstance(frame[c].dtype, pd.DatetimeTZDtype):
            problems.append(f"{name}: pandas loads {c} as {frame[c].dtype}, not timezone-aware")
    return problems


def check_sequence(root: Path) -> list[str]:
    """Problems of a sequence export (empty: it passed): the zip's tables, their join, the image files."""
    import pyarrow.parquet as pq

    from robokit.converters.viam.reader import read_sequence, sequence_exports

    zips = sorted(root.glob("*.zip"))
    if len(zips) != 1:
        return [f"{root}: expected one <dataset-id>.zip, found {len(zips)}"]
    with zipfile.ZipFile(zips[0]) as zf:
        missing = [t for t in TABLES if t not in zf.namelist()]
        if missing:
            return [f"{zips[0].name}: no {', '.join(missing)}"]
        tables = {t: pq.read_table(zf.open(t)) for t in TABLES}
    problems = [p for name, table in tables.items() for p in _table_problems(name, table)]
    known = set(tables["sequences.parquet"].column("sequence_id").to_pylist())
    for name in ("binary_data.parquet", "tabular_data.parquet"):
        orphans = set(tables[name].column("sequence_id").to_pylist()) - known
        if orphans:
            problems.append(f"{name}: sequence ids {sorted(orphans)[:3]} are not in sequences.parquet")
    for payload in tables["tabular_data.parquet"].column("payload").to_pylist()[:1000]:
        if not isinstance(json.loads(payload), dict):
            problems.append(f"tabular_data.parquet: payload {payload[:60]!r} is not a JSON object")
            break
    if problems:
        return problems
    try:
        episodes = [e for export in sequence_exports(zips[0]) for e in read_sequence(export)]
        if (root / SEQUENCE_DATA_DIR).is_dir():  # else written with only_parquet
            problems += [w for e in episodes for w in e.warnings if "missing" in w]
            images = sum(len(s) for e in episodes for s in e.cameras.values())
            rows = tables[BINARY_TABLE].num_rows
            problems += [] if images == rows else [f"{images} readable images for {rows} binary_data rows"]
    except RobokitError as exc:
        problems.append(f"robokit could not read it back: {exc}")
    return problems
