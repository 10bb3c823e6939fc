"""Viam binary dataset writer (`--to viam-binary`): `dataset.jsonl` plus the image files under `data/`.

One JSON line per image of every selected camera, in the shape `viam dataset export` writes: `image_path`
(starting with the destination as given, relative when it was), classification labels from the task,
normalised bounding boxes from `<camera>/detections`, `timestamp` (UTC, Go's time text), `binary_data_id`,
`part_id` and `component_name` (the camera). robokit adds its own `robokit` object (sequence and episode
IDs, traceability) and a box `confidence` when known; training scripts ignore keys they do not read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from robokit.converters.options import WriterOptions
from robokit.converters.registry import ExtraOption, WriteResult
from robokit.converters.staging import staged_dir
from robokit.converters.viam.records import (
    DATASET_ID,
    IMAGE_FORMAT,
    PART_ID,
    Ids,
    ImageRecord,
    export_ids,
    image_records,
    labels,
    skip,
    trace,
)
from robokit.errors import ChannelError, ConversionError, RobokitError
from robokit.timeline import Episode
from robokit.viam.layout import DATA_DIR, JSONL, ROBOKIT_KEY, go_time, rfc3339

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


class ViamBinaryWriter:
    """`--to viam-binary`: a Viam binary dataset export at `<out>/viam-binary/`."""

    name = "viam-binary"
    description = "Viam binary dataset (dataset.jsonl + data/ image files, as `viam dataset export` writes)"
    consumes = "episodes"
    extra_options = (ONLY_JSONL, DATASET_ID, PART_ID, IMAGE_FORMAT)

    def check(self, format_dir: Path) -> list[str]:
        """Read it as a training script does (JSON lines / Parquet, pandas when installed) and with robokit."""
        from robokit.converters.viam.check import check_binary

        return check_binary(format_dir)

    def write(self, episodes: Sequence[Episode], out_dir: Path, options: WriterOptions) -> WriteResult:
        if not episodes:
            raise ConversionError(f"{self.name}: no episodes to write")
        result = WriteResult()
        ids = export_ids(episodes, options)
        destination = (out_dir / self.name).as_posix()  # as given: relative stays relative
        with_files = not bool(options.extra.get("only_jsonl", False))
        error: RobokitError | None = None
        with staged_dir(out_dir / self.name, overwrite=options.overwrite) as root, (root / JSONL).open("w") as f:
            if with_files:
                (root / DATA_DIR).mkdir()
            for episode, sequence_id in zip(episodes, ids.sequences, strict=True):
                tags = labels(episode, options)
                robokit = {"sequence_id": sequence_id, "episode_id": episode.id, **trace(episode)}
                try:
                    records = self._episode_files(episode, options, result, root, with_files, sequence_id)
                except (ChannelError, ConversionError) as exc:
                    error = error or exc
                    skip(result, episode, exc)
                    continue
                for record, file in records:
                    f.write(json_line(record, f"{destination}/{DATA_DIR}/{file}", ids, sequence_id, tags, robokit))
                    f.write("\n")
                result.episodes += 1
                result.frames += len(records)
            if not result.episodes:
                assert error is not None
                raise error
        result.files = sorted(p.relative_to(out_dir / self.name).as_posix()
                              for p in (out_dir / self.name).rglob("*") if p.is_file())
        return result

    @staticmethod
    def _episode_files(episode: Episode, options: WriterOptions, result: WriteResult, root: Path,
                       with_files: bool, sequence_id: str) -> list[tuple[ImageRecord, str]]:
        """Write one episode's image files (unless only the JSON lines are wanted): (record without bytes, file).

        File names follow Viam's: the capture time (RFC 3339), then the file's ID. When the episode fails
        half-way its files are removed again, so a skipped episode leaves nothing behind.
        """
        out: list[tuple[ImageRecord, str]] = []
        try:
            for record in image_records(episode, options, result.warnings, with_data=with_files):
                file = f"{rfc3339(record.timestamp_ns)}_{sequence_id}-{record.component}-{record.index:06d}"
                file += record.extension
                if record.data is not None:
                    (root / DATA_DIR / file).write_bytes(record.data)
                out.append((replace(record, data=None), file))
        except RobokitError:
            for _, file in out:
                (root / DATA_DIR / file).unlink(missing_ok=True)
            raise
        return out
