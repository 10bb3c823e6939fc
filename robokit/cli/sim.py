"""`robokit sim record|replay|scene`: record MuJoCo episodes as ROS 2 bags, replay exported actions, export the scene.

MuJoCo is imported inside the commands, so the rest of the CLI never pays for it (or for a missing GL).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

TOLERANCE = 0.1  # rad (m for the gripper): a joint's max tracking error above this fails `robokit sim replay`

if TYPE_CHECKING:
    from robokit.sim.replay import ReplayReport

app = typer.Typer(
    help="MuJoCo pick-and-place simulator: record ROS 2 bags, replay exported datasets, export the scene.",
    no_args_is_help=True)


@app.command("record")
def record(
    out: Annotated[Path, typer.Option("--out", help="Folder to write episode_NNN/ bags and scene.xml into.")],
    episodes: Annotated[int, typer.Option(help="Number of episodes.")] = 3,
    duration: Annotated[float, typer.Option(help="Seconds per episode.")] = 6.0,
    width: Annotated[int, typer.Option(help="Image width in pixels.")] = 160,
    height: Annotated[int, typer.Option(help="Image height in pixels.")] = 120,
    seed: Annotated[int, typer.Option(help="Random seed: cube poses, timings and noise per episode.")] = 0,
) -> None:
    """Record scripted pick-and-place episodes: joints, commands, two cameras, tf, task, and the MJCF."""
    from robokit.sim.record import RecordSpec
    from robokit.sim.record import record as run

    began = time.perf_counter()
    results = run(out, episodes, RecordSpec(duration_s=duration, width=width, height=height, seed=seed))
    for r in results:
        outcome = "cube placed in the bin" if r.placed else "cube not in the bin"
        typer.echo(f"{r.path}  {outcome}  ({r.seconds:.1f} s)")
    elapsed = time.perf_counter() - began
    typer.echo(f"{len(results)} episode(s) of {duration:g} s at {width}x{height} in {elapsed:.1f} s; "
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
def replay(
    dataset: Annotated[Path, typer.Argument(help="An exported dataset: LeRobot root, RLDS folder, MCAP, bag.")],
    model: Annotated[Path, typer.Option("--model", help="The MJCF to drive (e.g. the recording's scene.xml).")],
    action: Annotated[str | None, typer.Option(help="Action channel (default: action, else "
                                                    "joint_commands/position).")] = None,
    state: Annotated[str, typer.Option(help="Recorded joint state channel.")] = "joints/position",
    interpolate: Annotated[bool, typer.Option(help="Ramp between actions instead of holding each one (for "
                                                   "datasets exported below the command rate).")] = False,
    tolerance: Annotated[float, typer.Option(help="Exit 1 when a joint's max error exceeds this (rad; m for the "
                                                  "gripper); `inf` only reports.")] = TOLERANCE,
    as_json: Annotated[bool, typer.Option("--json", help="Print the reports as JSON.")] = False,
) -> None:
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
        typer.echo(json.dumps([r.to_dict() for r in reports], indent=2))
    else:
        typer.echo("\n".join(_table(r) for r in reports))
    worst = max(reports, key=lambda r: r.max_joint_error)
    if worst.max_joint_error > tolerance:
        joint = max(zip(worst.joint_max, worst.joints, strict=True))[1]
        typer.echo(f"robokit: joint tracking error {worst.max_joint_error:.5f} ({worst.episode}, {joint}) exceeds "
                   f"the tolerance {tolerance:g}; --tolerance inf only reports", err=True)
        raise typer.Exit(1)


@app.command("scene")
def scene(
    out: Annotated[Path, typer.Option("--out", help="Folder to write <format>/ into.")],
    to: Annotated[list[str] | None, typer.Option("--to", help="Scene format (repeatable): mjcf, usd.")] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace existing <format>/ folders.")] = False,
) -> None:
    """Export the simulator's scene (table, bin, cube, front camera, light, floor) with the scene writers."""
    from robokit.sim.scene_export import SCENE_FORMATS, export_scene

    for name, result in export_scene(out, tuple(to or SCENE_FORMATS), overwrite).items():
        typer.echo(f"{out / name}: {len(result.files)} file(s)")
        for warning in result.warnings:
            typer.echo(f"  note: {warning}")
