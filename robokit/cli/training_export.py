"""`training-export-service`: `robokit convert` under the training-export service's name and flags.

The service's flags (`--input-file`, `--training-export-format`, `--training-export-dir`,
`--training-export-task`) are aliases of convert's own options, so both spellings work everywhere.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    """Run `robokit convert` with these arguments (default: the command line) and exit with its code."""
    from robokit.cli import main as robokit_main

    args = sys.argv[1:] if argv is None else argv
    raise SystemExit(robokit_main(["convert", *args]))
