"""Checks a written `rerun/` folder: .rrd files that start like one and, with rerun-sdk, load as written.

With rerun-sdk each file is read through `rerun.chunk.RrdReader`: exactly one recording (robokit's application
id), a default blueprint, and every chunk decodes, with at least one entity on the `time` timeline.
"""

from __future__ import annotations

from pathlib import Path

from robokit.converters.consumers import RERUN
from robokit.converters.rerun.recording import APPLICATION_ID

RRD_MAGIC = b"RRF2"


def check_file(path: Path) -> list[str]:
    """What is wrong with one .rrd (empty when it loads as robokit writes it)."""
    with path.open("rb") as f:
        if f.read(len(RRD_MAGIC)) != RRD_MAGIC:
            return [f"{path.name}: not an .rrd (no {RRD_MAGIC.decode()} header)"]
    if not RERUN.available():
        return []
    from rerun.chunk import RrdReader

    try:
        reader = RrdReader(path)
        recordings, blueprints = reader.recordings(), reader.blueprints()
        if len(recordings) != 1:
            return [f"{path.name}: {len(recordings)} recordings, expected 1"]
        problems = []
        if recordings[0].application_id != APPLICATION_ID:
            problems.append(f"{path.name}: application id {recordings[0].application_id!r}, not {APPLICATION_ID!r}")
        if not blueprints:
            problems.append(f"{path.name}: no blueprint")
        timed = {c.entity_path for c in reader.stream().to_chunks() if "time" in c.timeline_names}
        if not timed:
            problems.append(f"{path.name}: nothing on the `time` timeline")
        return problems
    except Exception as exc:  # rerun raises its own error types for damaged files
        return [f"{path.name}: rerun-sdk cannot read it: {exc}"]


def check_folder(folder: Path) -> list[str]:
    """Problems of every .rrd in `folder` (a folder without any is a problem too)."""
    files = sorted(folder.glob("*.rrd"))
    if not files:
        return [f"{folder}: no .rrd files"]
    return [problem for path in files for problem in check_file(path)]
