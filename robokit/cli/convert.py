"""`robokit convert`: recordings or a manifest → every requested format, one subfolder each."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from robokit.cli.params import PATH
from robokit.converters import available, get_converter
from robokit.converters.options import ACTION, FPS, FRAME, OVERWRITE, QUAT_ORDER, RESAMPLE, ROBOT_TYPE, STATE, TASK
from robokit.converters.registry import ExtraOption
from robokit.errors import OptionError
from robokit.limits import MAX_IMAGE_SIDE, MAX_WORKERS


def format_options_help() -> str:
    """The format-specific options of every registered writer, with defaults (for `--help`)."""
    lines = ["Format options (pass as --name VALUE):"]
    for name in available():
        for opt in get_converter(name).extra_options:
            choices = f" [{'|'.join(opt.choices)}]" if opt.choices else ""
            valid = f", {opt.valid}" if opt.low is not None or opt.high is not None else ""
            lines.append(f"  {opt.flag}{choices}  ({name}, default {opt.default!r}{valid}) {opt.help}")
    return "\n".join(lines) if len(lines) > 1 else ""


def _coerce(opt: ExtraOption[Any], raw: str | None) -> Any:
    if opt.type is bool and raw is None:
        return True
    if raw is None:
        raise OptionError(f"{opt.flag} needs a value")
    return opt.parse(raw)


def split_extra(args: list[str], formats: list[str]) -> tuple[list[Path], dict[str, Any]]:
    """Source paths, and `--name value` pairs of the requested formats' own options (unknown flags: errors).

    Click hands unknown options to the variadic sources argument, so both are separated here.
    """
    known = {o.flag: o for f in formats for o in get_converter(f).extra_options}
    out: dict[str, Any] = {}
    paths: list[Path] = []
    i = 0
    while i < len(args):
        if not args[i].startswith("--"):
            paths.append(Path(args[i]))
            i += 1
            continue
        flag, _, inline = args[i].partition("=")
        opt = known.get(flag)
        if opt is None:
            hint = ", ".join(sorted(known)) or "none for these formats"
            raise OptionError(f"unknown option {flag!r}; format options: {hint}")
        if inline or opt.type is bool:
            value = inline or None
        else:
            i += 1
            value = args[i] if i < len(args) else None
        out[opt.name] = _coerce(opt, value)
        i += 1
    return paths, out


def _load_config(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise OptionError(f"config {path}: {exc}") from exc
    section = data.get("training_export", data) if isinstance(data, dict) else None
    if not isinstance(section, dict):
        raise OptionError(f"config {path}: expected a mapping under 'training_export:'")
    return section


# The training-export service's names of the options, as accepted under `training_export:` in --config.
SERVICE_NAMES = {"input_file": "manifest", "training_export_format": "to", "training_export_dir": "out"}


def service_names(cfg: dict[str, Any]) -> dict[str, Any]:
    """A config section with the service's option names mapped to robokit's (a list of tasks joined by commas)."""
    out = {SERVICE_NAMES.get(k, k): v for k, v in cfg.items()}
    clash = [k for k, v in SERVICE_NAMES.items() if k in cfg and v in cfg]
    if clash:
        raise OptionError(f"config: give {clash[0]} or {SERVICE_NAMES[clash[0]]}, not both")
    tasks = out.get("training_export_task")
    if isinstance(tasks, list | tuple):
        out["training_export_task"] = ",".join(str(t) for t in tasks)
    return out


@click.command("convert", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@click.argument("sources", nargs=-1, type=click.UNPROCESSED)
@click.option("--to", "--training-export-format", "to", multiple=True, help="Output format (repeat for several).")
@click.option("--out", "--training-export-dir", "out", help="Output folder or fsspec URL (s3://...); one subfolder "
              "per format.")
@click.option("--manifest", "--input-file", "manifest", type=PATH,
              help="JSON Lines manifest (data_path, episode_id, ...).")
@click.option("--training-export-task", "export_tasks", multiple=True, help="Annotation task type of completed "
              "scenes to export (reasoning, caption, mcq; repeat for several; default: all).")
@click.option("--config", type=PATH, help="YAML with the same options under training_export:.")
@click.option("--fps", type=float, help=FPS.describe("slowest camera, else state"))
@click.option("--resample", help=RESAMPLE.describe())
@click.option("--camera", "cameras", multiple=True, help="Camera to keep, repeat for several; none for no camera "
              "(default: all).")
@click.option("--state", help=STATE.describe())
@click.option("--action", help=ACTION.describe("the source's recorded action, if any"))
@click.option("--pose", "poses", multiple=True, help="Pose channel to export (repeat).")
@click.option("--frame", help=FRAME.describe())
@click.option("--quat-order", help=QUAT_ORDER.describe())
@click.option("--image-size", help=f"Resize images to WxH, e.g. 320x240 (1 to {MAX_IMAGE_SIDE} per side; even for "
              "video).")
@click.option("--robot-type", help=ROBOT_TYPE.describe("none"))
@click.option("--task", help="Keep only episodes whose task is TEXT.")
@click.option("--set-task", help=TASK.describe("the recording's"))
@click.option("--shard", help="Export only slice I/N of the inputs (0 <= I < N).")
@click.option("--allow-outside/--no-allow-outside", default=False,
              help="Allow manifest paths outside its folder, and dataset symlinks to outside theirs.")
@click.option("--overwrite/--no-overwrite", default=OVERWRITE.default,
              help="Replace a different export already in --out, removing its formats this run does not write.")
@click.option("--no-cache", is_flag=True, help="Neither use nor fill the cache (a format already up to date in --out "
              "is still kept: convert into an empty --out to time a conversion).")
@click.option("--mapping", type=PATH, help="YAML/JSON file mapping topic (or HDF5 dataset) -> channel name, as for "
              "`robokit info --mapping`.")
@click.option("--no-verify", is_flag=True, help="Skip MCAP chunk CRC checks (faster on uncompressed chunks; damage "
              "goes unnoticed).")
@click.option("--workers", type=int, default=0, show_default=True, help=f"Parallel worker processes, up to "
              f"{MAX_WORKERS}; 0: one per CPU, fewer when each episode encodes several videos at once.")
@click.option("--executor", default="local", show_default=True, help="local | ray.")
@click.option("--ray-address", help="Address of an existing Ray cluster.")
@click.option("--quiet", "-q", is_flag=True, help="Only errors.")
@click.option("--verbose", "-v", is_flag=True, help="Also every item as it is read.")
@click.pass_context
def convert(ctx: click.Context, sources: tuple[str, ...], to: tuple[str, ...], out: str | None, manifest: Path | None,
            export_tasks: tuple[str, ...], config: Path | None, fps: float | None, resample: str | None,
            cameras: tuple[str, ...], state: str | None, action: str | None, poses: tuple[str, ...],
            frame: str | None, quat_order: str | None, image_size: str | None, robot_type: str | None,
            task: str | None, set_task: str | None, shard: str | None, allow_outside: bool, overwrite: bool,
            no_cache: bool, mapping: Path | None, no_verify: bool, workers: int, executor: str,
            ray_address: str | None, quiet: bool, verbose: bool) -> None:
    """Convert recordings into training datasets and scenes: many formats in one pass."""
    from robokit.cli.summary import print_summary
    from robokit.export import export
    from robokit.export.job import unwritten

    cfg = service_names(_load_config(config))
    formats = list(to or cfg.pop("to", None) or cfg.pop("formats", None) or [])
    if isinstance(formats, str):
        formats = [formats]
    if not formats:
        raise OptionError(f"give --to FORMAT (available: {', '.join(available())})")
    dest = out or (str(cfg.pop("out")) if "out" in cfg else None)  # a str: Path would fold "s3://" to "s3:/"
    if dest is None:
        raise OptionError("give --out DIR")
    cli = {"fps": fps, "resample": resample, "cameras": list(cameras) or None, "state": state, "action": action,
           "poses": list(poses) or None, "frame": frame, "quat_order": quat_order, "image_size": image_size,
           "robot_type": robot_type, "task": set_task}
    manifest = manifest or (Path(cfg.pop("manifest")) if "manifest" in cfg else None)
    mapping = mapping or (Path(str(cfg.pop("mapping"))) if "mapping" in cfg else None)
    paths, extra = split_extra([*sources, *ctx.args], formats)
    if export_tasks:
        extra["training_export_task"] = ",".join(export_tasks)
    options = {**cfg, **{k: v for k, v in cli.items() if v is not None}, **extra}
    options["overwrite"] = overwrite or OVERWRITE.parse(options.get("overwrite", OVERWRITE.default))

    def log(msg: str) -> None:
        if not quiet and (verbose or not msg.startswith("read ")):
            print(msg, file=sys.stderr)

    bars = None
    if not quiet and sys.stderr.isatty():
        from robokit.cli.progress import BarsProgress

        bars = BarsProgress()
    job = export(paths, formats, dest, options, manifest=manifest, task=task, shard_spec=shard,
                 allow_outside=allow_outside, use_cache=not no_cache, workers=workers,
                 executor=executor, ray_address=ray_address, log=log, progress=bars, verify=not no_verify,
                 mapping=mapping)
    if not quiet:
        print_summary(job)
    failed = unwritten(job.formats)
    if failed:  # exit 1: some requested format produced nothing (the others were written)
        print(f"robokit: error: {len(failed)} of {len(job.formats)} format(s) produced nothing: "
              + "; ".join(f"{name}: {reason}" for name, reason in failed.items()).replace("\n", " "), file=sys.stderr)
        raise click.exceptions.Exit(1)
