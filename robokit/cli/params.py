"""Parameter types shared by the commands."""

from __future__ import annotations

from pathlib import Path

import click

PATH = click.Path(path_type=Path)  # a path the command checks itself (existence errors name the recording, not click)
