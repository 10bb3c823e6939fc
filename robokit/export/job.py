"""The batch export: items → episodes (read once) → every requested writer → `<dest>/<format>/`.

Unconvertible items are skipped with a warning naming the item and the reason; the export fails
only when nothing converts. `<dest>/export.json` records every item and format; `export.log` the
warnings.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.digest import source_digest
from robokit.errors import ConversionError, OptionError, RobokitError
from robokit.export.cache import ExportCache, cache_key
from robokit.export.manifest import ManifestItem, items_from_paths, read_manifest, shard
from robokit.timeline import Episode

EXPORT_JSON = "export.json"
EXPORT_LOG = "export.log"


class ExportError(RobokitError):
    """Nothing could be converted, or the destination holds another export."""


@dataclass
class ItemReport:
    """What happened to one manifest item."""

    label: str
    data_path: str
    status: str = "converted"  # converted | skipped
    reason: str = ""
    episodes: list[str] = field(default_factory=list)
    frames: dict[str, int] = field(default_factory=dict)
    files: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class FormatReport:
    """What one writer produced."""

    name: str
    status: str = "written"  # written | cached | up-to-date | failed
    reason: str = ""
    episodes: int = 0
    frames: int = 0
    files: list[str] = field(default_factory=list)
    bytes: int = 0
    seconds: float = 0.0
    cache_key: str = ""
    warnings: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (episode id, reason)


@dataclass
class ExportJob:
    """The result of `export()`; `wait()` returns it (exports run to completion before returning)."""

    dest: str
    status: str
    items: list[ItemReport]
    formats: dict[str, FormatReport]
    warnings: list[str]
    options: dict[str, Any]
    seconds: float

    @property
    def files(self) -> list[str]:
        return [f"{name}/{f}" for name, r in self.formats.items() for f in r.files]

    def wait(self) -> ExportJob:
        return self

    def to_dict(self) -> dict[str, Any]:
        from robokit import __version__

        return {"robokit_version": __version__, "dest": self.dest, "status": self.status,
                "seconds": round(self.seconds, 3), "options": self.options,
                "formats": {k: asdict(v) for k, v in self.formats.items()},
                "items": [asdict(i) for i in self.items], "warnings": self.warnings}


Log = Callable[[str], None]


def _open_item(item: ManifestItem) -> list[Episode]:
    """Episodes of one item with its manifest overrides applied; the index pass runs here."""
    import robokit

    episodes = robokit.open(item.data_path)
    out = []
    for n, ep in enumerate(episodes):
        if not ep.streams:
            raise RobokitError(f"{item.data_path}: no readable streams")
        if item.segment:
            ep = ep.crop(*item.segment)
        changes: dict[str, Any] = {}
        if item.episode_id:
            changes["episode_id"] = item.episode_id if len(episodes) == 1 else f"{item.episode_id}_{n:03d}"
        if item.task:
            changes["tasks"] = (item.task,)
        if item.tags:
            changes["tags"] = {**ep.meta.tags, **item.tags}
        out.append(ep.with_streams(ep.streams, **changes) if changes else ep)
    return out


def _options_record(options: WriterOptions) -> dict[str, Any]:
    record = asdict(options)
    record.pop("overwrite", None)
    return record


def _format_sources(episodes: Sequence[Episode]) -> list[dict[str, Any]]:
    return [{"uri": e.meta.source_uri, "version": e.meta.source_version, "segment": e.meta.segment,
             "id": e.id, "tasks": e.tasks, "tags": dict(e.meta.tags)} for e in episodes]


def _scene_sources(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """Scene inputs by content: a description's whole folder (its meshes and splats), else the file."""
    out = []
    for p in paths:
        files = [f for f in p.parent.rglob("*") if f.is_file()] if p.suffix in (".yaml", ".yml", ".json") else [p]
        out.append({"scene": str(p), "version": source_digest(files)})
    return out


def _previous(dest: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads((dest / EXPORT_JSON).read_text())
        return data
    except (OSError, ValueError):
        return {}


def _write_format(
    name: str, episodes: Sequence[Episode], scene_paths: Sequence[Path], dest: Path, options: WriterOptions,
    cache: ExportCache | None, previous: dict[str, Any], log: Log,
) -> FormatReport:
    from robokit import __version__

    conv = get_converter(name)
    report = FormatReport(name)
    start = time.perf_counter()
    key = cache_key(name, _options_record(options), _format_sources(episodes) + _scene_sources(scene_paths),
                    __version__)
    report.cache_key = key
    out = dest / name
    prior = previous.get("formats", {}).get(name, {})
    if out.exists() and prior.get("cache_key") == key and prior.get("status") != "failed":
        log(f"{name}: up to date in {out} (same sources and options)")
        return FormatReport(**{**prior, "status": "up-to-date", "seconds": 0.0})
    if out.exists() and not options.overwrite:
        raise ExportError(f"{out} already holds a different export; pass --overwrite to replace it")
    entry = cache.get(key) if cache else None
    if entry is not None:
        if out.exists():
            shutil.rmtree(out)
        cache.materialise(entry, out)  # type: ignore[union-attr]
        log(f"{name}: cache hit {key[:12]}, {entry.meta.get('episodes', 0)} episode(s) reused without converting")
        report = FormatReport(**{**entry.meta["report"], "status": "cached", "cache_key": key})
        report.seconds = time.perf_counter() - start
        return report
    if conv.consumes == "scene":
        from robokit.export.scenes import load_scene

        if not scene_paths:
            raise RobokitError(f"{name} writes scenes: give a scene file (YAML/JSON, splat PLY or mesh)")
        writer: Any = conv
        result = writer.write_scene(load_scene(scene_paths, episodes, options), dest, options)
    else:
        if not episodes:
            raise RobokitError(f"{name}: no recordings to convert")
        try:
            result = conv.write(episodes, dest, options)
        except OSError as exc:  # e.g. a full disk: the writer's staging folder is already gone
            raise ConversionError(f"{name}: {exc.strerror or exc} ({exc.filename or dest})") from exc
    report.episodes, report.frames, report.files = result.episodes, result.frames, result.files
    report.warnings = list(result.warnings)
    report.bytes = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    report.seconds = time.perf_counter() - start
    log(f"{name}: wrote {report.episodes} episode(s), {report.frames} frames, {report.bytes / 1e6:.1f} MB "
        f"in {report.seconds:.1f} s ({report.frames / max(report.seconds, 1e-9):.0f} frames/s)")
    for w in result.warnings:
        log(f"warning: {name}: {w}")
    if cache is not None:
        cache.put(key, out, {"format": name, "episodes": report.episodes, "report": asdict(report)})
    report.skipped = list(result.skipped)
    return report


@dataclass
class Inputs:
    """What the items gave: their reports, the episodes to convert, and scene files."""

    reports: list[ItemReport]
    episodes: list[Episode]
    scene_paths: list[Path]


def read_items(items: Sequence[ManifestItem], task: str | None, note: Log) -> Inputs:
    """Open every item (index pass included); unreadable ones are skipped with their reason."""
    from robokit.export.scenes import is_scene_input

    inputs = Inputs([], [], [])
    for item in items:
        rep = ItemReport(item.label, str(item.data_path))
        inputs.reports.append(rep)
        t0 = time.perf_counter()
        if is_scene_input(item.data_path):
            inputs.scene_paths.append(item.data_path)
            rep.episodes = [item.data_path.stem]
            continue
        try:
            eps = _open_item(item)
        except RobokitError as exc:
            rep.status, rep.reason = "skipped", str(exc)
            note(f"warning: skipped {item.label}: {exc}")
            continue
        if task is not None:
            eps = [e for e in eps if task in e.tasks]
            if not eps:
                rep.status, rep.reason = "skipped", f"task does not match {task!r}"
                continue
        rep.episodes = [e.id for e in eps]
        rep.seconds = time.perf_counter() - t0
        for e in eps:
            note(f"read {item.label}: episode {e.id}, {len(e.streams)} streams, {e.duration_s:.1f} s")
        inputs.episodes.extend(eps)
    return inputs


@dataclass(frozen=True)
class FormatTask:
    """One format to write: everything a worker process (or Ray task) needs, picklable."""

    name: str
    items: tuple[ManifestItem, ...]
    task: str | None
    dest: Path
    options: WriterOptions
    cache_root: Path | None
    use_cache: bool
    previous: dict[str, Any]


def run_format(task: FormatTask, inputs: Inputs | None = None) -> tuple[FormatReport, list[str]]:
    """Write one format (reading the items again when `inputs` is not given, as in a worker)."""
    messages: list[str] = []
    inputs = inputs or read_items(task.items, task.task, lambda m: None)
    cache = ExportCache(task.cache_root) if task.use_cache else None
    try:
        report = _write_format(task.name, inputs.episodes, inputs.scene_paths, task.dest, task.options, cache,
                               task.previous, messages.append)
    except ExportError:
        raise
    except RobokitError as exc:
        report = FormatReport(task.name, status="failed", reason=str(exc))
        messages.append(f"warning: {task.name}: {exc}")
    return report, messages


def export(
    sources: Iterable[str | Path] = (),
    formats: Sequence[str] = ("lerobot",),
    dest: str | Path = "export",
    options: Mapping[str, Any] | WriterOptions | None = None,
    *,
    manifest: str | Path | None = None,
    task: str | None = None,
    shard_spec: str | None = None,
    allow_outside: bool = False,
    use_cache: bool = True,
    cache_root: Path | None = None,
    workers: int = 1,
    executor: str = "local",
    ray_address: str | None = None,
    log: Log | None = None,
) -> ExportJob:
    """Convert recordings (paths or a manifest) into every format in `formats`, one subfolder each.

    `dest` may be a local path or an fsspec URL (written to a local staging folder, uploaded at the
    end). With `workers > 1` (or `executor="ray"`) formats are written in parallel processes (Ray tasks),
    each reading the items itself; the output equals the serial one.
    """
    from robokit.export.destination import Destination
    from robokit.export.executors import run_tasks

    started = time.perf_counter()
    messages: list[str] = []

    def note(msg: str) -> None:
        messages.append(msg)
        if log:
            log(msg)

    if not formats:
        raise OptionError("give at least one format")
    for name in formats:
        get_converter(name)
    extra_keys = tuple(o.name for n in formats for o in get_converter(n).extra_options)
    opts = options if isinstance(options, WriterOptions) else WriterOptions.from_mapping(options or {}, extra_keys)
    items = items_from_paths(Path(s) for s in sources)
    if manifest is not None:
        more, warnings = read_manifest(Path(manifest), allow_outside)
        items += more
        for w in warnings:
            note(f"warning: {w}")
    if not items:
        raise OptionError("nothing to export: give recordings or --manifest")
    if shard_spec:
        items = shard(items, shard_spec)
    with Destination(str(dest)) as target:
        dest_path = target.local
        inputs = read_items(items, task, note)
        previous = _previous(dest_path)
        dest_path.mkdir(parents=True, exist_ok=True)
        tasks = [FormatTask(name, tuple(items), task, dest_path, opts, cache_root, use_cache, previous)
                 for name in formats]
        if executor == "local" and (workers <= 1 or len(tasks) == 1):
            results = [run_format(t, inputs) for t in tasks]
        else:
            results = run_tasks(tasks, executor, workers, ray_address)
        format_reports: dict[str, FormatReport] = {}
        for fr, msgs in results:
            for m in msgs:
                note(m)
            format_reports[fr.name] = fr
            _attribute(fr, inputs.reports, note)
        job = _finish(inputs.reports, format_reports, messages, opts, str(dest), started)
        (dest_path / EXPORT_JSON).write_text(json.dumps(job.to_dict(), indent=2, default=str))
        (dest_path / EXPORT_LOG).write_text("\n".join(messages) + ("\n" if messages else ""))
        if job.status == "failed":
            reasons = "; ".join(f"{r.label}: {r.reason}" for r in inputs.reports) or "no items"
            raise ExportError(f"nothing converted ({reasons})")
        target.publish()
    return job


def _attribute(fr: FormatReport, reports: list[ItemReport], note: Log) -> None:
    """Give each item the files of a format, and warn about its episodes the writer skipped."""
    skipped = dict(fr.skipped)
    for rep in reports:
        if rep.status != "converted":
            continue
        mine = [ep_id for ep_id in rep.episodes if ep_id in skipped]
        for ep_id in mine:
            note(f"warning: {fr.name}: skipped episode {ep_id} of {rep.label}: {skipped[ep_id]}")
        if fr.status != "failed" and len(mine) < len(rep.episodes):
            rep.files[fr.name] = [f for f in fr.files if any(ep_id in f for ep_id in rep.episodes)] or fr.files


def _finish(reports: list[ItemReport], formats: dict[str, FormatReport], messages: list[str],
            opts: WriterOptions, dest: str, started: float) -> ExportJob:
    converted = [r for r in reports if r.status == "converted" and r.files]
    for rep in reports:
        if rep.status == "converted" and not rep.files:
            rep.status = "skipped"
            rep.reason = rep.reason or "; ".join(f"{n}: {f.reason}" for n, f in formats.items() if f.reason) \
                or "no format accepted it"
    return ExportJob(dest, "done" if converted else "failed", reports, formats,
                     [m for m in messages if m.startswith("warning")], _options_record(opts),
                     time.perf_counter() - started)


def summary_rows(job: ExportJob) -> list[tuple[str, ...]]:
    """One row per format: status, episodes, frames, size, time."""
    return [(name, r.status, str(r.episodes), str(r.frames), f"{r.bytes / 1e6:.1f} MB", f"{r.seconds:.1f} s")
            for name, r in job.formats.items()]
