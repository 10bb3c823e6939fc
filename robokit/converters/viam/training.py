"""`load_training_args`: the arguments a Viam custom training job passes a script, parsed and loaded as episodes.

A job on a binary dataset passes `--dataset_file` (the JSON Lines file), one on a sequence dataset
`--binary_data_file`, `--tabular_data_file` and `--sequences_file`; both pass `--model_output_directory`
and every user argument as `--<key>=<value>`. The same call works on a local export, so a script written
with robokit runs unchanged on `viam dataset export` (or robokit) output and in the cloud job. The job's
own files are trusted: absolute image paths (`/gcs/...`) are opened as they are; `..` is still refused.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from robokit.converters.viam.layout import BINARY_TABLE, SEQUENCES_TABLE, TABULAR_TABLE
from robokit.errors import OptionError, SourceError
from robokit.timeline import Episode

DATASET_FILE = "dataset_file"
OUTPUT_DIR = "model_output_directory"
SEQUENCE_FILES = {"binary_data_file": BINARY_TABLE, "tabular_data_file": TABULAR_TABLE,
                  "sequences_file": SEQUENCES_TABLE}
RESERVED = (DATASET_FILE, OUTPUT_DIR, *SEQUENCE_FILES)


@dataclass(frozen=True)
class TrainingData:
    """A training job's dataset as episodes, where to write the model, and the user's own arguments."""

    episodes: list[Episode]
    model_output_directory: Path
    layout: str  # "binary" or "sequence"
    args: dict[str, str] = field(default_factory=dict)


def parse_args(argv: Sequence[str]) -> dict[str, str]:
    """`--key=value` (as Viam passes them) or `--key value` pairs; a bare `--flag` is "true"."""
    out: dict[str, str] = {}
    i = 0
    while i < len(argv):
        token = argv[i]
        if not token.startswith("--") or len(token) == 2:
            raise OptionError(f"unexpected argument {token!r}; training arguments are --key=value")
        key, eq, value = token[2:].partition("=")
        if not eq:
            has_value = i + 1 < len(argv) and not argv[i + 1].startswith("--")
            value = argv[i + 1] if has_value else "true"
            i += has_value
        out[key] = value
        i += 1
    return out


def load_training_args(argv: Sequence[str] | None = None) -> TrainingData:
    """Parse a training job's arguments (default: `sys.argv[1:]`) and load its dataset; OptionError when they
    name neither a binary nor a sequence dataset, SourceError when a file is missing or unreadable."""
    from robokit.converters.viam.reader import (  # robokit.viam is imported by it
        SequenceExport,
        read_binary,
        read_sequence,
    )

    args = parse_args(sys.argv[1:] if argv is None else argv)
    if OUTPUT_DIR not in args:
        raise OptionError(f"--{OUTPUT_DIR} is required (where the trained model goes)")
    output = Path(args[OUTPUT_DIR])
    given = [a for a in SEQUENCE_FILES if a in args]
    user = {k: v for k, v in args.items() if k not in RESERVED}
    if DATASET_FILE in args and given:
        sequence = ", ".join("--" + a for a in given)
        raise OptionError(f"--{DATASET_FILE} (binary dataset) cannot be combined with {sequence} (sequence dataset)")
    if DATASET_FILE in args:
        jsonl = Path(args[DATASET_FILE])
        if not jsonl.is_file():
            raise SourceError(f"--{DATASET_FILE} {jsonl}: no such file")
        episodes, layout = read_binary(jsonl, trusted=True), "binary"
    elif given:
        missing = [a for a in SEQUENCE_FILES if a not in args]
        if missing:
            raise OptionError(f"a sequence dataset needs {', '.join('--' + a for a in missing)} as well")
        tables = {table: Path(args[a]) for a, table in SEQUENCE_FILES.items()}
        for a, table in SEQUENCE_FILES.items():
            if not tables[table].is_file():
                raise SourceError(f"--{a} {tables[table]}: no such file")
        export = SequenceExport(tables[BINARY_TABLE].parent, tables, trusted=True)
        episodes, layout = read_sequence(export), "sequence"
    else:
        raise OptionError(f"give --{DATASET_FILE} (binary dataset) or {', '.join('--' + a for a in SEQUENCE_FILES)}"
                          " (sequence dataset)")
    output.mkdir(parents=True, exist_ok=True)
    return TrainingData(episodes, output, layout, user)
