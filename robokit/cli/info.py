"""`robokit info`: one table per recording (rich on a terminal, plain text when piped, or JSON)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from robokit.cli.params import PATH
from robokit.timeline import EpisodeInfo

_COLUMNS = ("channel", "kind", "topic", "type", "count", "rate Hz", "start (UTC)", "duration s", "time")


def _rows(info: EpisodeInfo) -> list[tuple[str, ...]]:
    return [
        (s.channel, s.kind, s.topic, s.msgtype, str(s.count), f"{s.rate_hz:.2f}", s.start_utc,
         f"{s.duration_s:.3f}", s.time_source)
        for s in info.streams
    ]


def _heading(info: EpisodeInfo) -> str:
    tasks = "; ".join(info.tasks) or "-"
    return f"{info.source} [{info.source_format}] episode {info.episode_id}: {info.duration_s:.3f} s, task: {tasks}"


def _notes(info: EpisodeInfo) -> list[str]:
    lines = [f"{s.channel}: {s.detail}" for s in info.streams if s.detail]
    lines += [f"skipped {s.topic} ({s.msgtype}, {s.count} messages): {s.reason}" for s in info.skipped]
    lines += [f"warning: {w}" for w in info.warnings]
    if info.losses:
        lost = sum(x.messages or 0 for x in info.losses)
        lines.append(f"incomplete: {lost} message(s) of the recording lost" if lost else
                     "incomplete: messages of the recording lost (count unknown)")
    return lines


def render_plain(info: EpisodeInfo) -> str:
    """Fixed-width text, for pipes and logs."""
    rows = [_COLUMNS, *_rows(info)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_COLUMNS))]
    lines = [_heading(info)]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines + _notes(info))


def render_rich(info: EpisodeInfo) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=_heading(info), title_justify="left")
    for col in _COLUMNS:
        table.add_column(col, justify="right" if col in ("count", "rate Hz", "duration s") else "left")
    for row in _rows(info):
        table.add_row(*row)
    console = Console()
    console.print(table)
    for note in _notes(info):
        console.print(note, style="yellow", markup=False)


@click.command("info")
@click.argument("sources", nargs=-1, required=True, type=PATH)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.option("--mapping", type=PATH, help="YAML/JSON file mapping topic -> channel name.")
@click.option("--plot", type=PATH, help="Also draw a timeline PNG (one per episode).")
@click.option("--no-verify", is_flag=True, help="Skip MCAP chunk CRC checks.")
def info(sources: tuple[Path, ...], as_json: bool, mapping: Path | None, plot: Path | None, no_verify: bool) -> None:
    """Show every stream of each recording: channel, kind, topic, count, rate, start, duration."""
    import robokit
    from robokit.plot import plot_timeline

    episodes = robokit.open(sources, mapping=mapping, verify=not no_verify)
    infos = [ep.info() for ep in episodes]
    if plot is not None:
        for n, ep in enumerate(episodes):
            target = plot if len(episodes) == 1 else plot.with_name(f"{plot.stem}_{n:03d}{plot.suffix}")
            plot_timeline(ep, target)
    if as_json:
        click.echo(json.dumps([i.to_dict() for i in infos], indent=2))
    elif sys.stdout.isatty():
        for i in infos:
            render_rich(i)
    else:
        click.echo("\n\n".join(render_plain(i) for i in infos))
