"""The `robokit` command: user mistakes print one clear line and exit 2, never a traceback."""

from __future__ import annotations

import sys

import typer

from robokit.cli import cache, check, convert, info, sample, sim
from robokit.errors import RobokitError

app = typer.Typer(
    name="robokit",
    help="Turn robot recordings into training-ready datasets and simulator scenes.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command("info")(info.info)
app.command("check")(check.check)
app.command("sample")(sample.sample)
app.add_typer(cache.app, name="cache")
app.add_typer(sim.app, name="sim")
app.command("convert", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(convert.convert)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code (usage errors: 2, like click)."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["convert"] and ("--help" in args or "-h" in args):
        convert.convert.__doc__ = f"{convert.convert.__doc__}\n\n{convert.format_options_help()}"
    try:
        app(args=args, prog_name="robokit")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except RobokitError as exc:
        print(f"robokit: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the file system refused (a path that is a file, permissions, a full disk)
        where = f": {exc.filename}" if exc.filename else ""
        print(f"robokit: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1
    return 0
