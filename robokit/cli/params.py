"""Parameter types and option groups shared by the commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

PATH = click.Path(path_type=Path)  # a path the command checks itself (existence errors name the recording, not click)


def recording_options(out: str, episodes: int, duration: float, seed: str) -> Callable[[F], F]:
    """--out, --episodes, --duration, --width, --height and --seed of the commands that write recordings."""
    options = [
        click.option("--out", required=True, type=PATH, help=out),
        click.option("--episodes", default=episodes, show_default=True, help="Number of episodes."),
        click.option("--duration", default=duration, show_default=True, help="Seconds per episode."),
        click.option("--width", default=160, show_default=True, help="Image width in pixels."),
        click.option("--height", default=120, show_default=True, help="Image height in pixels."),
        click.option("--seed", default=0, show_default=True, help=seed),
    ]

    def decorate(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate
