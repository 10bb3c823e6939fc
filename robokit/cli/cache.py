"""`robokit cache ls|rm`: list or remove cached exports."""

from __future__ import annotations

from datetime import UTC, datetime

import click

from robokit.export.cache import ExportCache


@click.group("cache")
def app() -> None:
    """List or remove cached exports ($ROBOKIT_CACHE, else ~/.cache/robokit/exports)."""


@app.command("ls")
def ls() -> None:
    """One line per entry: key, format, episodes, size, creation time."""
    cache = ExportCache()
    entries = cache.entries()
    for e in entries:
        created = datetime.fromtimestamp(float(e.meta.get("created", 0)), tz=UTC).strftime("%Y-%m-%d %H:%M")
        click.echo(f"{e.key}  {e.meta.get('format', '?'):<14} {e.meta.get('episodes', 0):>5} ep  "
                   f"{e.size / 1e6:>9.1f} MB  {created}")
    click.echo(f"{len(entries)} entries in {cache.root}")


@app.command("rm")
@click.argument("key", required=False)
@click.option("--all", "all_", is_flag=True, help="Remove every entry.")
def rm(key: str | None, all_: bool) -> None:
    """Remove one entry (by key prefix) or all of them with --all."""
    if key is None and not all_:
        raise click.UsageError("give a KEY or --all")
    gone = ExportCache().remove(None if all_ else key)
    click.echo(f"removed {gone} entr{'y' if gone == 1 else 'ies'}")
