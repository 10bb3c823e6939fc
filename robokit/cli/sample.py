"""`robokit sample`: write the built-in sample recordings."""

from __future__ import annotations

from pathlib import Path

import click

from robokit.cli.params import recording_options


@click.command("sample")
@recording_options("Folder to write episode_NNN/ bags into.", 2, 4.0, "Random seed (same seed, same bytes).")
@click.option("--scene", is_flag=True, help="Write the sample scene (scene.yaml, splat.ply, meshes/: a table, a bin, "
              "a cube, a splat cloud) instead.")
def sample(out: Path, episodes: int, duration: float, width: int, height: int, seed: int, scene: bool) -> None:
    """Write deterministic sample ROS 2 bags (MCAP storage): joints, two cameras, tf, task; or the sample scene."""
    if scene:
        from robokit.converters.scene import write_sample_scene

        click.echo(str(write_sample_scene(out, seed=seed)))
        return
    from robokit.samples import SampleSpec, write_samples  # imported here: the bag writer is not needed elsewhere

    spec = SampleSpec(duration_s=duration, width=width, height=height, seed=seed)
    for path in write_samples(out, episodes, spec):
        click.echo(str(path))
