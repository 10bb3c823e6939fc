"""`robokit check DIR...`: load each written format folder with its real consumer; a pass/fail table."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from robokit.converters import available, get_converter
from robokit.errors import SourceError

_COLUMNS = ("folder", "format", "result", "reason")


@dataclass(frozen=True)
class CheckRow:
    """The outcome for one format folder: its problems (none: passed)."""

    folder: Path
    format: str
    problems: tuple[str, ...]

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


def run_check(folder: Path, name: str) -> CheckRow:
    """Run the converter's own check; a crash of the consumer is a failure with its message, not a traceback."""
    try:
        problems = get_converter(name).check(folder)
    except Exception as exc:  # the consumer failing to load the output is the finding
        problems = [f"check crashed: {type(exc).__name__}: {exc}"]
    return CheckRow(folder, name, tuple(problems))


def render_plain(rows: list[CheckRow]) -> str:
    """Fixed-width text, one line per problem (the first on the folder's row)."""
    lines = [_COLUMNS]
    for r in rows:
        reasons = list(r.problems) or [""]
        lines.append((str(r.folder), r.format, "pass" if r.passed else "FAIL", reasons[0]))
        lines += [("", "", "", reason) for reason in reasons[1:]]
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
        table.add_row(escape(str(r.folder)), r.format, result, escape("\n".join(r.problems)))
    Console().print(table)


def check(
    paths: Annotated[list[Path], typer.Argument(help="Output folders: DIR holding <format>/ subfolders, or one.")],
) -> None:
    """Load every output folder with its real consumer and print pass/fail with the reasons; exit 1 on a failure."""
    rows = [run_check(folder, name) for path in paths for folder, name in format_folders(path)]
    if sys.stdout.isatty():
        render_rich(rows)
    else:
        typer.echo(render_plain(rows))
    failed = sum(not r.passed for r in rows)
    if failed:
        typer.echo(f"{failed} of {len(rows)} failed", err=True)
        raise typer.Exit(1)
