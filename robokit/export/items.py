"""Manifest items opened into episodes (the index pass), with their manifest overrides applied."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from robokit.errors import RobokitError, reading
from robokit.export.manifest import ManifestItem
from robokit.sources import ReadOptions, open_episodes
from robokit.sources.sniff import is_annotated_scene, is_scene_file
from robokit.timeline import Episode
from robokit.timeline.losses import lost_messages

if TYPE_CHECKING:
    from robokit.converters.reasoning.scene import Scene

Log = Callable[[str], None]


@dataclass
class EpisodeReport:
    """What the reader delivered of one episode: `complete` unless messages were lost (how many, why)."""

    id: str
    complete: bool = True
    lost_messages: int = 0  # known to be lost; a loss without a count (e.g. a cut file) adds nothing
    losses: list[dict[str, Any]] = field(default_factory=list)  # topic, reason, messages (None: unknown)
    warnings: list[str] = field(default_factory=list)


def episode_report(ep: Episode) -> EpisodeReport:
    """The reader's account of one opened episode."""
    return EpisodeReport(ep.id, ep.complete, lost_messages(ep.losses), [asdict(x) for x in ep.losses],
                         list(ep.warnings))


@dataclass
class ItemReport:
    """What happened to one manifest item."""

    label: str
    data_path: str
    kind: str = "recording"  # recording | scene | annotated-scene
    status: str = "converted"  # converted | skipped
    reason: str = ""
    episodes: list[str] = field(default_factory=list)
    frames: dict[str, int] = field(default_factory=dict)
    files: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0
    complete: bool = True  # every episode read in full (see episode_reports)
    lost_messages: int = 0
    warnings: list[str] = field(default_factory=list)  # the reader's, per episode
    episode_reports: list[EpisodeReport] = field(default_factory=list)

    def add_episode(self, report: EpisodeReport, many: bool) -> None:
        """Count one episode's reader report into the item's (warnings prefixed by the episode when `many`)."""
        self.episode_reports.append(report)
        self.complete = self.complete and report.complete
        self.lost_messages += report.lost_messages
        self.warnings += [f"episode {report.id}: {w}" if many else w for w in report.warnings]


def _why_none(episode: Episode) -> str:
    """What the reader said of an episode it read no stream from (its warnings name every skipped topic and loss),
    the first few, so that the reason reaches export.json and the summary with the skip."""
    said = list(dict.fromkeys(episode.warnings))
    if not said:
        return ""
    more = f"; and {len(said) - _WHY_SHOWN} more" if len(said) > _WHY_SHOWN else ""
    return f" ({'; '.join(said[:_WHY_SHOWN])}{more})"


_WHY_SHOWN = 4


def open_item(item: ManifestItem, verify: bool = True, note: Log | None = None,
              mapping: Mapping[str, str] | None = None) -> list[Episode]:
    """Episodes of one item with its manifest overrides applied (and the user's topic → channel `mapping`); the
    index pass runs here. An episode that cannot be read is left out (told to `note`) unless none can, so one bad
    episode never sinks the others."""
    with reading(str(item.data_path)):
        episodes = open_episodes(item.data_path, ReadOptions(mapping=dict(mapping or {}), verify=verify,
                                                             allow_outside=item.allow_outside))
    out = []
    failures: list[str] = []
    for n, ep in enumerate(episodes):
        try:
            if not ep.streams:
                raise RobokitError(f"{item.data_path}: no readable streams{_why_none(ep)}")
        except RobokitError as exc:
            if len(episodes) == 1:
                raise
            failures.append(str(exc))
            if note is not None:
                note(f"warning: skipped episode {ep.id} of {item.label}: {exc}")
            continue
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
    if not out and failures:
        raise RobokitError(f"no episode could be read ({failures[0]})")
    return out


@dataclass(frozen=True)
class EpisodeRef:
    """Where an episode comes from, so another process can open it again: item, position in the item,
    whether chunks are verified (so it reads the same messages) and the topic → channel mapping pairs."""

    item: ManifestItem
    position: int
    verify: bool = True
    mapping: tuple[tuple[str, str], ...] = ()


@dataclass
class Inputs:
    """What the items gave: their reports, the episodes to convert (with their refs), scene files, and
    completed (annotated) scene folders."""

    reports: list[ItemReport]
    episodes: list[Episode]
    refs: list[EpisodeRef]
    scene_paths: list[Path]
    annotated: list[Scene] = field(default_factory=list)


def read_items(items: Sequence[ManifestItem], task: str | None, note: Log, verify: bool = True,
               mapping: Mapping[str, str] | None = None) -> Inputs:
    """Open every item (index pass included); unreadable ones are skipped with their reason.

    Every reader warning (truncation, damage, lost or undecodable messages) is logged with its episode."""
    inputs = Inputs([], [], [], [])
    for item in items:
        rep = ItemReport(item.label, str(item.data_path))
        inputs.reports.append(rep)
        t0 = time.perf_counter()
        if _read_annotated(item, rep, inputs, note):
            continue
        if is_scene_file(item.data_path):
            inputs.scene_paths.append(item.data_path)
            rep.kind, rep.episodes = "scene", [item.data_path.stem]
            continue
        try:
            eps = list(enumerate(open_item(item, verify, note, mapping)))
        except RobokitError as exc:
            rep.status, rep.reason = "skipped", str(exc)
            note(f"warning: skipped {item.label}: {exc}")
            continue
        if task is not None:
            eps = [(n, e) for n, e in eps if task in e.tasks]
            if not eps:
                rep.status, rep.reason = "skipped", f"task does not match {task!r}"
                continue
        rep.episodes = [e.id for _, e in eps]
        rep.seconds = time.perf_counter() - t0
        for n, e in eps:
            note(f"read {item.label}: episode {e.id}, {len(e.streams)} streams, {e.duration_s:.1f} s")
            _report_reading(rep, e, len(eps) > 1, note)
            inputs.episodes.append(e)
            inputs.refs.append(EpisodeRef(item, n, verify, tuple((mapping or {}).items())))
    return inputs


def _read_annotated(item: ManifestItem, rep: ItemReport, inputs: Inputs, note: Log) -> bool:
    """Read a completed scene folder into `inputs` (or skip it with its reason); False: not such a folder."""
    if not is_annotated_scene(item.data_path):
        return False
    from robokit.converters.reasoning.scene import read_scene  # here: recordings never load the scene model

    rep.kind = "annotated-scene"
    t0 = time.perf_counter()
    try:
        scene = read_scene(item.data_path)
        other = next((s for s in inputs.annotated if s.id == scene.id), None)
        if other is not None:
            raise RobokitError(f"scene id {scene.id!r} is already used by {other.path}")
    except RobokitError as exc:
        rep.status, rep.reason = "skipped", str(exc)
        note(f"warning: skipped {item.label}: {exc}")
        return True
    ignored = [k for k in ("episode_id", "task", "segment", "tags") if getattr(item, k)]
    if ignored:
        scene.warnings.append(f"manifest key(s) {', '.join(ignored)} do not apply to a completed scene; ignored")
    rep.episodes, rep.warnings, rep.seconds = [scene.id], list(scene.warnings), time.perf_counter() - t0
    note(f"read {item.label}: scene {scene.id}, {len(scene.media)} camera(s), {len(scene.items)} item(s)")
    for w in scene.warnings:
        note(f"warning: {item.label}: scene {scene.id}: {w}")
    inputs.annotated.append(scene)
    return True


def _report_reading(rep: ItemReport, ep: Episode, many: bool, note: Log) -> None:
    """Log an episode's reader warnings and losses and add them to its item's report."""
    er = episode_report(ep)
    rep.add_episode(er, many)
    for w in er.warnings:
        note(f"warning: {rep.label}: episode {ep.id}: {w}")
    if not er.complete:
        count = f"{er.lost_messages} message(s)" if er.lost_messages else "an unknown number of messages"
        note(f"warning: {rep.label}: episode {ep.id} is incomplete: {count} of the recording lost")
