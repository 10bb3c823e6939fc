"""`robokit check DIR...`: load each written format folder with its real consumer; a pass/fail table."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import click

from robokit.cli.params import PATH
from robokit.converters import available, get_converter
from robokit.converters.consumers import consumer_of
from robokit.errors import SourceError

_COLUMNS = ("folder", "format", "result", "checked by", "reason")


@dataclass(frozen=True)
class CheckRow:
    """The outcome for one format folder: who validated it and its problems (none: passed)."""

    folder: Path
    format: str
    problems: tuple[str, ...]
    checked_by: str = "robokit"

    @property
    def passed(self) -> bool:
        return not self.problems


def format_folders(path: Path) -> list[tuple[Path, str]]:
    """(folder, format) for `path` itself when it is named after a format, else for its format subfolders."""
    if not path.is_dir():
        raise SourceError(f"{path}: not a folder")
    known = available()
    if path.name in known:
        return [(path, path.name)]
    found = [(p, p.name) for p in sorted(path.iterdir()) if p.is_dir() and p.name in known]
    if not found:
        raise SourceError(f"{path}: no output folder of a known format inside; expected one of {', '.join(known)}")
    return found


def run_check(folder: Path, name: str, strict: bool = False) -> CheckRow:
    """Run the converter's check (robokit's structure, then the real consumer when it imports); a crash is a
    failure with its message, not a traceback. `strict`: a consumer that is not installed is a failure."""
    converter = get_converter(name)
    consumer = consumer_of(name, converter)
    if consumer is None:
        checked_by = "the format's own check"
    elif consumer.available():
        checked_by = f"robokit + {consumer.name}"
    else:
        checked_by = f"robokit only ({consumer.name} not installed)"
    try:
        problems = converter.check(folder)
    except Exception as exc:  # the consumer failing to load the output is the finding
        problems = [f"check crashed: {type(exc).__name__}: {exc}"]
    if strict and consumer is not None and not consumer.available():
        problems = [*problems, f"--strict: {consumer.name} is not installed, so only robokit's structural check ran"]
    return CheckRow(folder, name, tuple(problems), checked_by)


def render_plain(rows: list[CheckRow]) -> str:
    """Fixed-width text, one line per problem (the first on the folder's row)."""
    lines = [_COLUMNS]
    for r in rows:
        reasons = list(r.problems) or [""]
        lines.append((str(r.folder), r.format, "pass" if r.passed else "FAIL", r.checked_by, reasons[0]))
        lines += [("", "", "", "", reason) for reason in reasons[1:]]
    widths = [max(len(line[i]) for line in lines) for i in range(len(_COLUMNS) - 1)]
    return "\n".join("  ".join([*(c.ljust(w) for c, w in zip(line[:-1], widths, strict=True)), line[-1]]).rstrip()
                     for line in lines)


def render_rich(rows: list[CheckRow]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="robokit check", title_justify="left")
    for col in _COLUMNS:
        table.add_column(col)
    for r in rows:
        result = "[green]pass[/green]" if r.passed else "[red]FAIL[/red]"
        table.add_row(escape(str(r.folder)), r.format, result, escape(r.checked_by), escape("\n".join(r.problems)))
    Console().print(table)


@click.command("check")
@click.argument("paths", nargs=-1, required=True, type=PATH)
@click.option("--strict/--no-strict", default=False, help="Fail an output whose real consumer (lerobot, "
              "tensorflow_datasets, webdataset, ...) is not installed.")
def check(paths: tuple[Path, ...], strict: bool) -> None:
    """Check every output folder with robokit's structural check and, when installed, its real consumer; print
    pass/fail, who checked it and the reasons; exit 1 on a failure."""
    rows = [run_check(folder, name, strict) for path in paths for folder, name in format_folders(path)]
    if sys.stdout.isatty():
        render_rich(rows)
    else:
        click.echo(render_plain(rows))
    failed = sum(not r.passed for r in rows)
    if failed:
        click.echo(f"{failed} of {len(rows)} failed", err=True)
        raise click.exceptions.Exit(1)
