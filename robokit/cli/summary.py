"""The final summary table of an export (rich on a terminal, plain text when piped)."""

from __future__ import annotations

import sys

from robokit.export.job import ExportJob, contents_text, summary_rows, unwritten

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
        console = Console()
        console.print(table)
        for line in reading_lines(job):
            console.print(line, style="yellow", markup=False)
    else:
        widths = [max(len(r[i]) for r in [_COLUMNS, *rows]) for i in range(len(_COLUMNS))]
        print(title)
        for r in [_COLUMNS, *rows]:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        for line in reading_lines(job):
            print(line)
    for name, report in job.formats.items():  # scene formats hold no episodes: say what they hold
        if report.contents:
            print(f"{name}: {contents_text(report.contents)}")
    _print_unwritten(job)


def reading_lines(job: ExportJob) -> list[str]:
    """What the readers lost or warned about: one line per incomplete episode, then the warning count."""
    lines = []
    for item in job.items:
        for ep in item.episode_reports:
            if not ep.complete:
                lost = f"{ep.lost_messages} message(s) lost" if ep.lost_messages else "messages lost (count unknown)"
                why = "; ".join(f"{x['topic'] + ': ' if x['topic'] else ''}{x['reason']}" for x in ep.losses[:3])
                why += "; ..." if len(ep.losses) > 3 else ""
                lines.append(f"incomplete: {item.label} episode {ep.id}: {lost} ({why})")
    warned = sum(len(i.warnings) for i in job.items)
    if warned:
        lines.append(f"{warned} reader warning(s) in {job.dest}/export.log and export.json")
    return lines


def _print_unwritten(job: ExportJob) -> None:
    """Below the table: each requested format that produced nothing, and why (the export is then partial)."""
    for name, reason in unwritten(job.formats).items():
        print(f"{name}: nothing written: {' '.join(reason.split())}")
