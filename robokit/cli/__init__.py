"""The `robokit` command: user mistakes print one clear line and exit 2, never a traceback."""

from __future__ import annotations

import sys

import typer

from robokit.cli import info, sample
from robokit.errors import RobokitError

app = typer.Typer(
    name="robokit",
    help="Turn robot recordings into training-ready datasets and simulator scenes.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command("info")(info.info)
app.command("sample")(sample.sample)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code (usage errors: 2, like click)."""
    try:
        app(args=argv, prog_name="robokit")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except RobokitError as exc:
        print(f"robokit: error: {exc}", file=sys.stderr)
        return 2
    return 0
