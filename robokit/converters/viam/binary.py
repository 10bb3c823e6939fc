"""Viam binary dataset writer (`--to viam-binary`): `dataset.jsonl` plus the image files under `data/`.

One JSON line per image of every selected camera, in the shape `viam dataset export` writes: `image_path`
(starting with the destination as given, relative when it was), classification labels from the task,
normalised bounding boxes from `<camera>/detections`, `timestamp` (UTC, Go's time text), `binary_data_id`,
`part_id` and `component_name` (the camera). robokit adds its own `robokit` object (sequence and episode
IDs, traceability) and a box `confidence` when known; training scripts ignore keys they do not read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robokit.converters.options import WriterOptions
from robokit.converters.registry import ExtraOption, WriteResult
from robokit.converters.staging import staged_dir
from robokit.converters.streaming import Encoded, EpisodeContext, accepted, write_streaming
from robokit.converters.viam.layout import DATA_DIR, JSONL, ROBOKIT_KEY, go_time, rfc3339
from robokit.converters.viam.records import (
    DATASET_ID,
    IMAGE_FORMAT,
    PART_ID,
    Ids,
    ImageRecord,
    check_cameras,
    export_ids,
    image_records,
    labels,
    trace,
)
from robokit.timeline import Episode

ONLY_JSONL = ExtraOption("only_jsonl", bool, False, "Write dataset.jsonl only, without the image files.")


def json_line(record: ImageRecord, image_path: str, ids: Ids, sequence_id: str, tags: tuple[str, ...],
              robokit: dict[str, Any]) -> str:
    """One `dataset.jsonl` line."""
    boxes = [{"annotation_label": b.label, "x_min_normalized": b.x_min, "x_max_normalized": b.x_max,
              "y_min_normalized": b.y_min, "y_max_normalized": b.y_max,
              **({} if b.confidence is None else {"confidence": b.confidence})} for b in record.boxes or ()]
    return json.dumps({
        "image_path": image_path,
        "classification_annotations": [{"annotation_label": t} for t in tags],
        "bounding_box_annotations": boxes,
        "timestamp": go_time(record.timestamp_ns),
        "binary_data_id": record.binary_data_id(ids, sequence_id),
        "part_id": ids.part,
        "component_name": record.component,
        ROBOKIT_KEY: robokit,
    })


def file_name(record: ImageRecord, sequence_id: str) -> str:
    """Viam's file name: the capture time (RFC 3339), then the file's ID."""
    return f"{rfc3339(record.timestamp_ns)}_{sequence_id}-{record.component}-{record.index:06d}{record.extension}"


@dataclass(frozen=True)
class _Plan:
    """What every episode's encoding shares: the options, the IDs and whether the image files are written."""

    options: WriterOptions
    ids: Ids
    with_files: bool


class ViamBinaryWriter:
    """`--to viam-binary`: a Viam binary dataset export at `<out>/viam-binary/`."""

    name = "viam-binary"
    description = "Viam binary dataset (dataset.jsonl + data/ image files, as `viam dataset export` writes)"
    extra_options = (ONLY_JSONL, DATASET_ID, PART_ID, IMAGE_FORMAT)
    names_out_dir = True  # image_path starts with --out: the export cache keys it by the destination

    def check(self, format_dir: Path) -> list[str]:
        """Read it as a training script does (JSON lines / Parquet, pandas when installed) and with robokit."""
        from robokit.converters.viam.check import check_binary

        return check_binary(format_dir)

    def write(self, episodes: Sequence[Episode], out_dir: Path, options: WriterOptions) -> WriteResult:
        return write_streaming(self, episodes, out_dir, options)

    def plan(self, episodes: Sequence[Episode], options: WriterOptions) -> _Plan:
        ids = export_ids(episodes, options)
        check_cameras(episodes, options)
        return _Plan(options, ids, not options.value(ONLY_JSONL))

    def encode(self, ctx: EpisodeContext, plan: _Plan) -> Encoded:
        """The episode's image records (bytes included unless only the JSON lines are wanted), tags and trace."""
        episode = ctx.episode
        warnings: list[str] = []
        records = list(image_records(episode, plan.options, warnings, with_data=plan.with_files))
        robokit = {"sequence_id": plan.ids.sequences[ctx.index], "episode_id": episode.id, **trace(episode)}
        return Encoded(ctx.index, episode.id, (records, labels(episode, plan.options), robokit), len(records),
                       warnings=warnings)

    def assemble(self, parts: Iterable[Encoded], out_dir: Path, plan: _Plan) -> WriteResult:
        result = WriteResult()
        destination = (out_dir / self.name).as_posix()  # as given: relative stays relative
        with staged_dir(out_dir / self.name, overwrite=plan.options.overwrite) as root, \
                (root / JSONL).open("w") as f:
            if plan.with_files:
                (root / DATA_DIR).mkdir()
            for part in accepted(self.name, parts, result):
                records, tags, robokit = part.data
                sequence_id = plan.ids.sequences[part.index]
                held = result.episode_files.setdefault(part.episode_id, [])
                for record in records:
                    file = file_name(record, sequence_id)
                    if record.data is not None:
                        (root / DATA_DIR / file).write_bytes(record.data)
                        held.append(f"{DATA_DIR}/{file}")
                    f.write(json_line(record, f"{destination}/{DATA_DIR}/{file}", plan.ids, sequence_id, tags,
                                      robokit))
                    f.write("\n")
        result.files = sorted(p.relative_to(out_dir / self.name).as_posix()
                              for p in (out_dir / self.name).rglob("*") if p.is_file())
        return result


VIAM_BINARY = ViamBinaryWriter()
