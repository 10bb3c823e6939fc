"""`robokit sample`: write the built-in sample recordings."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def sample(
    out: Annotated[Path, typer.Option("--out", help="Folder to write episode_NNN/ bags into.")],
    episodes: Annotated[int, typer.Option(help="Number of episodes.")] = 2,
    duration: Annotated[float, typer.Option(help="Seconds per episode.")] = 4.0,
    width: Annotated[int, typer.Option(help="Image width in pixels.")] = 160,
    height: Annotated[int, typer.Option(help="Image height in pixels.")] = 120,
    seed: Annotated[int, typer.Option(help="Random seed (same seed, same bytes).")] = 0,
    scene: Annotated[bool, typer.Option("--scene", help="Write the sample scene (scene.yaml, splat.ply, meshes/: "
                                                        "a table, a bin, a cube, a splat cloud) instead.")] = False,
) -> None:
    """Write deterministic sample ROS 2 bags (MCAP storage): joints, two cameras, tf, task; or the sample scene."""
    if scene:
        from robokit.converters.scene import write_sample_scene

        typer.echo(str(write_sample_scene(out, seed=seed)))
        return
    from robokit.samples import SampleSpec, write_samples  # imported here: the bag writer is not needed elsewhere

    spec = SampleSpec(duration_s=duration, width=width, height=height, seed=seed)
    for path in write_samples(out, episodes, spec):
        typer.echo(str(path))
