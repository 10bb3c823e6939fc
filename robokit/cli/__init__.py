"""The `robokit` command: user mistakes print one clear line and exit 2, never a traceback."""

from __future__ import annotations

import gc
import shutil
import sys

import click

from robokit import heap
from robokit.cli import cache, check, convert, info, sample, sim
from robokit.errors import RobokitError


@click.group("robokit", context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120})
def app() -> None:
    """Turn robot recordings into training-ready datasets and simulator scenes."""


for command in (info.info, check.check, sample.sample, cache.app, sim.app, convert.convert):
    app.add_command(command)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code (usage errors: 2, like click)."""
    args = sys.argv[1:] if argv is None else argv
    heap.own_process()
    if args[:1] == ["convert"] and ("--help" in args or "-h" in args):
        convert.convert.epilog = f"\b\n{convert.format_options_help()}"  # set, not appended: main runs again in tests
    try:
        app.main(args=args, prog_name="robokit")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except RobokitError as exc:
        print(f"robokit: error: {one_line(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:  # the file system refused (a path that is a file, permissions, a full disk)
        print(f"robokit: error: {os_error_line(exc)}", file=sys.stderr)
        return 1
    return 0


def run() -> None:
    """The console script: exits with `main`'s code, sparing the interpreter's final garbage collections over
    the objects a run leaves behind (about 50 ms; the process is ending anyway)."""
    code = main()
    gc.freeze()
    sys.exit(code)


def one_line(text: str) -> str:
    """A message on one line (line breaks of wrapped library messages become spaces)."""
    return " ".join(text.split())


def os_error_line(exc: OSError) -> str:
    """What the file system said, and where: `shutil` copies report a list of failures, the first one is shown."""
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list) and exc.args[0]:
        first = exc.args[0][0]
        src, dst, why = (*first, "", "", "")[:3] if isinstance(first, tuple) else ("", "", first)
        more, where = len(exc.args[0]) - 1, str(dst or src)
        text = str(why) if where in str(why) else f"{why}: {where}"
        return one_line(text + (f" (and {more} more)" if more else ""))
    where = f": {exc.filename}" if exc.filename else ""
    return one_line(f"{exc.strerror or exc}{where}")
