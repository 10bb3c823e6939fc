"""The batch export: items → episodes (read once) → every requested writer → `<dest>/<format>/`.

Formats that are up to date or cached are reused; the others are written from one pass over the
episodes (see pipeline.py), episodes encoded in parallel when there are workers; scene formats and
plug-in writers without the streaming steps write on their own. Unconvertible items are skipped with a
warning naming the item and the reason; the export fails only when nothing converts.
`<dest>/export.json` records every item and format; `export.log` the warnings.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.registry import (
    AnnotatedSceneWriter,
    EpisodeWriter,
    SceneWriter,
    WriteResult,
    checked_options,
    kind_of,
)
from robokit.converters.streaming import StreamingConverter
from robokit.digest import source_digest
from robokit.errors import ConversionError, OptionError, RobokitError
from robokit.export.cache import ExportCache, cache_key
from robokit.export.executors import check_executor
from robokit.export.folder import check_inputs, earlier_formats, exclusive, remove_formats
from robokit.export.items import Inputs, ItemReport, Log, read_items
from robokit.export.manifest import items_from_paths, read_manifest, shard
from robokit.export.progress import NoProgress, Progress
from robokit.limits import MAX_WORKERS
from robokit.sources.naming import load_mapping
from robokit.timeline import Episode
from robokit.version import __version__

EXPORT_JSON = "export.json"
EXPORT_LOG = "export.log"


class ExportError(RobokitError):
    """Nothing could be converted, or the destination holds another export."""


class NothingConverted(ExportError):
    """Every requested format failed: the inputs, not the command line, are at fault (exit 1, not 2)."""

    exit_code = 1


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
    episode_files: dict[str, list[str]] = field(default_factory=dict)  # see WriteResult
    episode_frames: dict[str, int] = field(default_factory=dict)
    contents: dict[str, int] = field(default_factory=dict)  # see WriteResult (scene writers)


@dataclass
class ExportJob:
    """The result of `export()`: finished, or `running` in a background thread (`wait=False`) until `wait()`."""

    dest: str
    status: str  # done: every format wrote | partial: some format produced nothing | failed: nothing converted
    items: list[ItemReport]
    formats: dict[str, FormatReport]
    warnings: list[str]
    options: dict[str, Any]
    seconds: float
    _thread: threading.Thread | None = field(default=None, repr=False, compare=False)
    _error: Exception | None = field(default=None, repr=False, compare=False)

    @property
    def files(self) -> list[str]:
        return [f"{name}/{f}" for name, r in self.formats.items() for f in r.files]

    def wait(self) -> ExportJob:
        """The finished job: blocks while it runs in the background, then raises what the export raised."""
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        return self

    def _run(self, work: Callable[[], ExportJob]) -> None:
        """Become the job `work` returns (its fields, the status last), or failed with its error kept for `wait`."""
        try:
            done = work()
        except Exception as exc:  # raised again by wait(), in the caller's thread
            self._error, self.status = exc, "failed"
            return
        for name in ("dest", "items", "formats", "warnings", "options", "seconds", "status"):
            setattr(self, name, getattr(done, name))

    def to_dict(self) -> dict[str, Any]:
        return {"robokit_version": __version__, "dest": self.dest, "status": self.status,
                "seconds": round(self.seconds, 3), "options": self.options,
                "formats": {k: asdict(v) for k, v in self.formats.items()},
                "items": [asdict(i) for i in self.items], "warnings": self.warnings}


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


def _annotated_sources(inputs: Inputs) -> list[dict[str, Any]]:
    """Completed scenes by content: every file of the scene folder."""
    return [{"annotated_scene": str(s.path), "id": s.id,
             "version": source_digest(sorted(f for f in s.path.rglob("*") if f.is_file()), s.path)}
            for s in inputs.annotated]


def _out_record(name: str, dest: Path) -> dict[str, str]:
    """The destination, for writers whose output names it (Viam binary `image_path`): part of their cache key."""
    return {"out_dir": dest.as_posix()} if getattr(get_converter(name), "names_out_dir", False) else {}


def _previous(dest: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads((dest / EXPORT_JSON).read_text())
        return data
    except (OSError, ValueError):
        return {}


def _reuse(name: str, key: str, out: Path, options: WriterOptions, cache: ExportCache | None,
           previous: dict[str, Any], log: Log) -> FormatReport | None:
    """The report of a format whose output is up to date or cached (then copied in); None: write it."""
    prior = previous.get("formats", {}).get(name, {})
    if out.exists() and prior.get("cache_key") == key and prior.get("status") != "failed":
        log(f"{name}: up to date in {out} (same sources and options)")
        return FormatReport(**{**prior, "status": "up-to-date", "seconds": 0.0})
    if out.exists() and not options.overwrite:
        raise ExportError(f"{out} already holds a different export; pass --overwrite to replace it")
    entry = cache.get(key) if cache else None
    if entry is None:
        return None
    start = time.perf_counter()
    try:
        cache.materialise(entry, out)  # type: ignore[union-attr]
    except OSError as exc:
        log(f"warning: {name}: cache entry {key[:12]} unreadable ({exc.strerror or exc}); converting instead")
        return None
    log(f"{name}: cache hit {key[:12]}, {entry.meta.get('episodes', 0)} episode(s) reused without converting")
    return FormatReport(**{**entry.meta["report"], "status": "cached", "cache_key": key,
                           "seconds": time.perf_counter() - start})


def _written(name: str, key: str, result: WriteResult, out: Path, seconds: float, cache: ExportCache | None,
             log: Log) -> FormatReport:
    """The report of a format just written, logged and put into the cache."""
    report = FormatReport(name, episodes=result.episodes, frames=result.frames, files=result.files,
                          warnings=list(result.warnings), cache_key=key, seconds=seconds,
                          skipped=list(result.skipped), episode_files=result.episode_files,
                          episode_frames=result.episode_frames, contents=result.contents)
    report.bytes = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    if report.contents:
        log(f"{name}: wrote {contents_text(report.contents)}, {report.bytes / 1e6:.1f} MB in {seconds:.1f} s")
    else:
        log(f"{name}: wrote {report.episodes} episode(s), {report.frames} frames, {report.bytes / 1e6:.1f} MB "
            f"in {seconds:.1f} s ({report.frames / max(seconds, 1e-9):.0f} frames/s)")
    for w in result.warnings:
        log(f"warning: {name}: {w}")
    if cache is not None:
        try:
            cache.put(key, out, {"format": name, "episodes": report.episodes, "report": asdict(report)})
        except OSError as exc:  # a full or unwritable cache costs the next run time, never this export
            log(f"warning: {name}: not cached ({exc.strerror or exc}: {exc.filename or cache.root})")
    return report


def _write_alone(name: str, inputs: Inputs, dest: Path, options: WriterOptions) -> WriteResult:
    """A scene format, or a plug-in writer without the streaming steps: it writes from all inputs itself."""
    conv = get_converter(name)
    try:
        if isinstance(conv, SceneWriter):
            from robokit.converters.scene import load_scene

            if not inputs.scene_paths:
                raise RobokitError(f"{name} writes scenes: give a scene file (YAML/JSON, splat PLY or mesh)")
            return conv.write_scene(load_scene(inputs.scene_paths, inputs.episodes, options), dest, options)
        if not inputs.episodes:
            raise RobokitError(f"{name}: no recordings to convert")
        if not isinstance(conv, EpisodeWriter):
            raise RobokitError(f"{name} is no writer of recordings")
        return conv.write(inputs.episodes, dest, options)
    except OSError as exc:  # e.g. a full disk: the writer's staging folder is already gone
        raise ConversionError(f"{name}: {exc.strerror or exc} ({exc.filename or dest})") from exc


def _streaming(name: str) -> StreamingConverter | None:
    conv = get_converter(name)
    return conv if kind_of(conv) == "episodes" and isinstance(conv, StreamingConverter) else None


Outcome = tuple[WriteResult | RobokitError, float]  # a format's result (or why it failed) and its seconds


def write_formats(names: Sequence[str], inputs: Inputs, dest: Path, options: WriterOptions, executor: str,
                  workers: int, ray_address: str | None, progress: Progress) -> dict[str, Outcome]:
    """Write every format: streaming ones from one shared pass (timed together), the others alone."""
    from robokit import heap
    from robokit.export.executors import auto_parallelism
    from robokit.export.pipeline import write_episodes

    outcomes: dict[str, Outcome] = _write_annotated(names, inputs, dest, options)
    shared: list[tuple[StreamingConverter, Any]] = []
    for name in (n for n in names if n not in outcomes):
        conv = _streaming(name)
        start = time.perf_counter()
        try:
            if conv is None:
                outcomes[name] = (_write_alone(name, inputs, dest, options), time.perf_counter() - start)
            elif not inputs.episodes:
                raise RobokitError(f"{name}: no recordings to convert")
            else:
                shared.append((conv, conv.plan(inputs.episodes, options)))
        except RobokitError as exc:
            outcomes[name] = (exc, time.perf_counter() - start)
    if shared:
        start = time.perf_counter()
        workers, at_once = (workers, 1) if workers else auto_parallelism(shared, inputs.episodes)
        heap.trim()  # what the index pass read and freed (every chunk of every recording), before encoding
        results = write_episodes(shared, inputs, dest, executor, workers, ray_address, progress, at_once)
        seconds = time.perf_counter() - start
        outcomes.update((name, (result, seconds)) for name, result in results.items())
    return {name: outcomes[name] for name in names}


def _write_annotated(names: Sequence[str], inputs: Inputs, dest: Path, options: WriterOptions) -> dict[str, Outcome]:
    """The formats that take completed scenes, written together: their clips are cut once (timed together)."""
    writers = [w for w in map(get_converter, names) if isinstance(w, AnnotatedSceneWriter)]
    if not writers:
        return {}
    from robokit.converters.reasoning.writer import write_annotated  # here: other exports never load it

    start = time.perf_counter()
    try:
        results = write_annotated(writers, inputs.annotated, dest, options)
    except OSError as exc:  # e.g. a full disk: the staging folders are already gone
        results = {w.name: ConversionError(f"{exc.strerror or exc} ({exc.filename or dest})") for w in writers}
    seconds = time.perf_counter() - start
    return {name: (result, seconds) for name, result in results.items()}


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
    progress: Progress | None = None,
    verify: bool = True,
    mapping: Mapping[str, str] | str | Path | None = None,
    wait: bool = True,
    **option_values: Any,
) -> ExportJob:
    """Convert recordings (paths or a manifest) into every format in `formats`, one subfolder each.

    `dest` may be a local path or an fsspec URL (written to a local staging folder, uploaded at the
    end). With `workers > 1` (or `executor="ray"`) episodes are encoded in worker processes (Ray tasks)
    and assembled in input order, so the output equals the serial one; `workers=0` picks the number from the
    CPUs and the cores one episode keeps busy (`executors.auto_parallelism`). `progress` is told about every
    episode each format assembles. `verify=False` skips chunk CRC checks when reading; `mapping` (a dict or a
    YAML/JSON file of `topic: channel` pairs) renames channels as `robokit.open` does. Writer options come as
    `options` or as keywords (`crf=40`, `fps=15`; the keyword `task` filters episodes, `options={"task": ...}` sets it).
    Options are checked before anything is read (OptionError); the job's
    status is "partial" when some format produced nothing, and ExportError is raised when nothing converted.
    With `wait=False` the export runs in a background thread (`log` and `progress` are called from it): the job
    says `running` until `job.wait()` returns it finished (or raises what the export raised).
    """
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
    if isinstance(options, WriterOptions) and option_values:
        raise OptionError("give options as WriterOptions or as keywords, not both")
    opts = options if isinstance(options, WriterOptions) else \
        WriterOptions.from_mapping({**(options or {}), **option_values}, extra_keys)
    opts = checked_options(formats, opts)
    channels = load_mapping(mapping)
    if isinstance(workers, bool) or not isinstance(workers, int) or not 0 <= workers <= MAX_WORKERS:
        raise OptionError(f"workers {workers!r}: expected an integer from 0 (automatic) to {MAX_WORKERS}")
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
    check_executor(executor)
    cache = ExportCache(cache_root) if use_cache else None
    if allow_outside:
        items = [replace(i, allow_outside=True) for i in items]

    def run() -> ExportJob:
        """The export itself, once its inputs are checked: read, write or reuse every format, record, publish."""
        from robokit.export.destination import Destination

        with Destination(str(dest)) as target, exclusive(target.local, note):
            dest_path = target.local
            previous = _previous(dest_path)
            earlier = earlier_formats(previous, dest_path, formats) if opts.overwrite else []
            if opts.overwrite:
                check_inputs([i.data_path for i in items], [dest_path / n for n in [*formats, *earlier]])
            inputs = read_items(items, task, note, verify, channels)
            record = {**_options_record(opts), "verify": verify, **({"mapping": channels} if channels else {})}
            keys = {name: cache_key(name, {**record, **_out_record(name, dest_path)},
                                    _format_sources(inputs.episodes) + _scene_sources(inputs.scene_paths)
                                    + _annotated_sources(inputs), __version__)
                    for name in formats}
            format_reports: dict[str, FormatReport] = {}
            for name in formats:
                reused = _reuse(name, keys[name], dest_path / name, opts, cache, previous, note)
                if reused is not None:
                    format_reports[name] = reused
            pending = [name for name in formats if name not in format_reports]
            outcomes = write_formats(pending, inputs, dest_path, opts, executor, workers, ray_address,
                                     progress or NoProgress())
            for name, (result, seconds) in outcomes.items():
                if isinstance(result, RobokitError):
                    reason = str(result).removeprefix(f"{name}: ")
                    format_reports[name] = FormatReport(name, status="failed", reason=reason, cache_key=keys[name])
                    note(f"warning: {name}: {reason}")
                else:
                    format_reports[name] = _written(name, keys[name], result, dest_path / name, seconds, cache, note)
            format_reports = {name: format_reports[name] for name in formats}
            for fr in format_reports.values():
                _attribute(fr, inputs.reports, note)
            job = _finish(inputs.reports, format_reports, messages, opts, str(dest), started)
            if job.status != "failed":
                remove_formats(dest_path, earlier, note)
            _write_atomic(dest_path / EXPORT_JSON, json.dumps(job.to_dict(), indent=2, default=str))
            _write_atomic(dest_path / EXPORT_LOG, "\n".join(messages) + ("\n" if messages else ""))
            if job.status == "failed":
                reasons = "; ".join(f"{r.label}: {r.reason}" for r in inputs.reports) or "no items"
                raise NothingConverted(f"nothing converted ({reasons})")
            target.publish()
        return job

    if wait:
        return run()
    job = ExportJob(str(dest), "running", [], {}, [], _options_record(opts), 0.0)
    job._thread = threading.Thread(target=job._run, args=(run,), name="robokit-export")
    job._thread.start()
    return job


def _attribute(fr: FormatReport, reports: list[ItemReport], note: Log) -> None:
    """Give each item a format's files holding its episodes (plus the shared ones) and their frames; warn
    about its episodes the writer skipped. Scene inputs only feed the scene formats."""
    skipped = dict(fr.skipped)
    held = {f for files in fr.episode_files.values() for f in files}
    shared = [f for f in fr.files if f not in held]
    consumes = kind_of(get_converter(fr.name))
    for rep in reports:
        if rep.status != "converted" or not _feeds(rep.kind, consumes):
            continue
        mine = [ep_id for ep_id in rep.episodes if ep_id in skipped]
        for ep_id in mine:
            what = "scene" if rep.kind == "annotated-scene" else "episode"
            note(f"warning: {fr.name}: skipped {what} {ep_id} of {rep.label}: {skipped[ep_id]}")
        if fr.status == "failed" or len(mine) == len(rep.episodes):
            continue
        own = {f for ep_id in rep.episodes for f in fr.episode_files.get(ep_id, ())}
        rep.files[fr.name] = sorted(own) + shared if fr.episode_files else list(fr.files)
        if fr.episode_frames:
            rep.frames[fr.name] = sum(fr.episode_frames.get(ep_id, 0) for ep_id in rep.episodes)


def _feeds(kind: str, consumes: str) -> bool:
    """Whether an item of `kind` is input to a format consuming `consumes`: completed scenes feed only the
    formats made for them, scene files only scene formats, recordings every other format."""
    if (kind == "annotated-scene") != (consumes == "annotated-scenes"):
        return False
    return kind != "scene" or consumes == "scene"


def _finish(reports: list[ItemReport], formats: dict[str, FormatReport], messages: list[str],
            opts: WriterOptions, dest: str, started: float) -> ExportJob:
    converted = [r for r in reports if r.status == "converted" and r.files]
    for rep in reports:
        if rep.status == "converted" and not rep.files:
            rep.status = "skipped"
            rep.reason = rep.reason or "; ".join(f"{n}: {f.reason}" for n, f in formats.items() if f.reason) \
                or "no format accepted it"
    status = "failed" if not converted else "partial" if unwritten(formats) else "done"
    return ExportJob(dest, status, reports, formats,
                     [m for m in messages if m.startswith("warning")], _options_record(opts),
                     time.perf_counter() - started)


def unwritten(formats: Mapping[str, FormatReport]) -> dict[str, str]:
    """The requested formats that produced nothing (failed, or no episode from a recording format), and why."""
    return {name: r.reason or "no episode written" for name, r in formats.items()
            if r.status == "failed" or (r.episodes == 0 and kind_of(get_converter(name)) == "episodes")}


def _write_atomic(path: Path, text: str) -> None:
    """Replace `path` only once the new text is fully written (a full disk leaves the previous file intact)."""
    tmp = path.with_name(f".{path.name}.partial")
    try:
        tmp.write_text(text)
        tmp.replace(path)
    except OSError as exc:  # name the file the user knows, not the temporary one
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
    finally:
        tmp.unlink(missing_ok=True)


def contents_text(contents: dict[str, int]) -> str:
    """What a scene writer wrote, in words: "2 object(s), 1 splat(s), 5 collider(s), 0 camera(s)"."""
    return ", ".join(f"{n} {kind.removesuffix('s')}(s)" for kind, n in contents.items())


def summary_rows(job: ExportJob) -> list[tuple[str, ...]]:
    """One row per format: status, episodes, frames, size, time."""
    return [(name, r.status, str(r.episodes), str(r.frames), f"{r.bytes / 1e6:.1f} MB", f"{r.seconds:.1f} s")
            for name, r in job.formats.items()]
