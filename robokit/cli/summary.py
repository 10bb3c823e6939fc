"""The final summary table of an export (rich on a terminal, plain text when piped)."""

from __future__ import annotations

import sys

from robokit.export.job import ExportJob, summary_rows, unwritten

_COLUMNS = ("format", "status", "episodes", "frames", "size", "time")


def print_summary(job: ExportJob) -> None:
    converted = sum(1 for i in job.items if i.status == "converted")
    skipped = len(job.items) - converted
    title = f"{job.dest}: {converted} item(s) converted, {skipped} skipped, {job.seconds:.1f} s"
    rows = summary_rows(job)
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title, title_justify="left")
        for col in _COLUMNS:
            table.add_column(col)
        for row in rows:
            table.add_row(*row)
        Console().print(table)
        _print_unwritten(job)
        return
    widths = [max(len(r[i]) for r in [_COLUMNS, *rows]) for i in range(len(_COLUMNS))]
    print(title)
    for r in [_COLUMNS, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    _print_unwritten(job)


def _print_unwritten(job: ExportJob) -> None:
    """Below the table: each requested format that produced nothing, and why (the export is then partial)."""
    for name, reason in unwritten(job.formats).items():
        print(f"{name}: nothing written: {' '.join(reason.split())}")
