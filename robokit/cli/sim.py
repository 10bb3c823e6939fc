"""`robokit sim record|replay|scene`: record MuJoCo episodes as ROS 2 bags, replay exported actions, export the scene.

MuJoCo is imported inside the commands, so the rest of the CLI never pays for it (or for a missing GL).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from robokit.cli.params import PATH, recording_options

TOLERANCE = 0.1  # rad (m for the gripper): a joint's max tracking error above this fails `robokit sim replay`

if TYPE_CHECKING:
    from robokit.sim.replay import ReplayReport


@click.group("sim")
def app() -> None:
    """MuJoCo pick-and-place simulator: record ROS 2 bags, replay exported datasets, export the scene."""


@app.command("record")
@recording_options("Folder to write episode_NNN/ bags and scene.xml into.", 3, 6.0,
                   "Random seed: cube poses, timings and noise per episode.")
def record(out: Path, episodes: int, duration: float, width: int, height: int, seed: int) -> None:
    """Record scripted pick-and-place episodes: joints, commands, two cameras, tf, task, and the MJCF."""
    from robokit.sim.record import RecordSpec
    from robokit.sim.record import record as run

    began = time.perf_counter()
    results = run(out, episodes, RecordSpec(duration_s=duration, width=width, height=height, seed=seed))
    for r in results:
        outcome = "cube placed in the bin" if r.placed else "cube not in the bin"
        click.echo(f"{r.path}  {outcome}  ({r.seconds:.1f} s)")
    elapsed = time.perf_counter() - began
    click.echo(f"{len(results)} episode(s) of {duration:g} s at {width}x{height} in {elapsed:.1f} s; "
               f"model: {out / 'scene.xml'}")


def _table(report: ReplayReport) -> str:
    """Per-joint RMS and max error, then the tool errors and notes, as fixed-width text."""
    rows = [("joint", "rms", "max")] + [(n, f"{r:.5f}", f"{m:.5f}") for n, r, m in
                                        zip(report.joints, report.joint_rms, report.joint_max, strict=True)]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [f"{report.episode}: {report.frames} frames"]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.append(f"  tool (vs recorded joints): rms {report.tool_rms * 1000:.2f} mm, "
                 f"max {report.tool_max * 1000:.2f} mm, rotation max {report.tool_rotation_max:.2f} deg")
    if report.recorded_tool_max is not None:
        lines.append(f"  tool (vs recorded tool pose): max {report.recorded_tool_max * 1000:.2f} mm")
    return "\n".join(lines + [f"  note: {n}" for n in report.notes])


@app.command("replay")
@click.argument("dataset", type=PATH)
@click.option("--model", required=True, type=PATH, help="The MJCF to drive (e.g. the recording's scene.xml).")
@click.option("--action", help="Action channel (default: action, else joint_commands/position).")
@click.option("--state", default="joints/position", show_default=True, help="Recorded joint state channel.")
@click.option("--interpolate/--no-interpolate", default=False, help="Ramp between actions instead of holding each "
              "one (for datasets exported below the command rate).")
@click.option("--tolerance", default=TOLERANCE, show_default=True, help="Exit 1 when a joint's max error exceeds "
              "this (rad; m for the gripper); `inf` only reports.")
@click.option("--json", "as_json", is_flag=True, help="Print the reports as JSON.")
def replay(dataset: Path, model: Path, action: str | None, state: str, interpolate: bool, tolerance: float,
           as_json: bool) -> None:
    """Drive the model with the dataset's actions; report per-joint and end-effector tracking errors.

    A delta action of the state (as the dataset's action metadata says) is replayed as state + delta; exit 1
    when a joint's error exceeds the tolerance.
    """
    from robokit.errors import OptionError
    from robokit.sim.replay import replay as run

    if not tolerance >= 0:  # NaN would pass every comparison
        raise OptionError(f"tolerance {tolerance}: expected a number of 0 or more (inf only reports)")
    reports = run(dataset, model, action, state, interpolate)
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in reports], indent=2))
    else:
        click.echo("\n".join(_table(r) for r in reports))
    worst = max(reports, key=lambda r: r.max_joint_error)
    if worst.max_joint_error > tolerance:
        joint = max(zip(worst.joint_max, worst.joints, strict=True))[1]
        click.echo(f"robokit: joint tracking error {worst.max_joint_error:.5f} ({worst.episode}, {joint}) exceeds "
                   f"the tolerance {tolerance:g}; --tolerance inf only reports", err=True)
        raise click.exceptions.Exit(1)


@app.command("scene")
@click.option("--out", required=True, type=PATH, help="Folder to write <format>/ into.")
@click.option("--to", multiple=True, help="Scene format (repeatable): mjcf, usd.")
@click.option("--overwrite/--no-overwrite", default=False, help="Replace existing <format>/ folders.")
def scene(out: Path, to: tuple[str, ...], overwrite: bool) -> None:
    """Export the simulator's scene (table, bin, cube, front camera, light, floor) with the scene writers."""
    from robokit.sim.scene_export import SCENE_FORMATS, export_scene

    for name, result in export_scene(out, tuple(to or SCENE_FORMATS), overwrite).items():
        click.echo(f"{out / name}: {len(result.files)} file(s)")
        for warning in result.warnings:
            click.echo(f"  note: {warning}")
