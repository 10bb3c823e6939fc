"""The final summary table of an export (rich on a terminal, plain text when piped)."""

from __future__ import annotations

import sys

from robokit.export.job import ExportJob, contents_text, summary_rows

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
    else:
        widths = [max(len(r[i]) for r in [_COLUMNS, *rows]) for i in range(len(_COLUMNS))]
        print(title)
        for r in [_COLUMNS, *rows]:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    for name, report in job.formats.items():  # scene formats hold no episodes: say what they hold
        if report.contents:
            print(f"{name}: {contents_text(report.contents)}")
