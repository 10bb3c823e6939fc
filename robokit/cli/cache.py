"""`robokit cache ls|rm`: list or remove cached exports."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer

from robokit.export.cache import ExportCache

app = typer.Typer(help="List or remove cached exports ($ROBOKIT_CACHE, else ~/.cache/robokit/exports).",
                  no_args_is_help=True)


@app.command("ls")
def ls() -> None:
    """One line per entry: key, format, episodes, size, creation time."""
    cache = ExportCache()
    entries = cache.entries()
    for e in entries:
        created = datetime.fromtimestamp(float(e.meta.get("created", 0)), tz=UTC).strftime("%Y-%m-%d %H:%M")
        typer.echo(f"{e.key}  {e.meta.get('format', '?'):<14} {e.meta.get('episodes', 0):>5} ep  "
                   f"{e.size / 1e6:>9.1f} MB  {created}")
    typer.echo(f"{len(entries)} entries in {cache.root}")


@app.command("rm")
def rm(
    key: Annotated[str | None, typer.Argument(help="Entry key or key prefix.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Remove every entry.")] = False,
) -> None:
    """Remove one entry (by key prefix) or all of them with --all."""
    if key is None and not all_:
        raise typer.BadParameter("give a KEY or --all")
    gone = ExportCache().remove(None if all_ else key)
    typer.echo(f"removed {gone} entr{'y' if gone == 1 else 'ies'}")
