"""Reasoning-VLM training sets from completed scenes: clips cut once, then packaged by each requested format.

`cosmos-reason-v1.0` writes `annotations.json` (LLaVA conversations) beside `clips/`; `tao-vl-reason-v1.0`
writes the same `annotations.json` beside `videos.tar.gz`, whose members are the `video` paths.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robokit.converters.options import WriterOptions
from robokit.converters.reasoning.clips import MAX_CLIP_FPS, ClipResult, write_clip
from robokit.converters.reasoning.scene import TASK_TYPES, Item, Scene
from robokit.converters.registry import AnnotatedSceneWriter, ExtraOption, WriteResult
from robokit.converters.staging import staged_dir, staging_prefix
from robokit.errors import ConversionError, OptionError, RobokitError
from robokit.timeline import Episode

ANNOTATED = "annotated-scenes"  # what these formats consume: completed scene folders, not episodes
ANNOTATIONS = "annotations.json"
CLIPS = "clips"
TARBALL = "videos.tar.gz"


def task_filter(value: str | None) -> frozenset[str] | None:
    """The `training_export_task` option (comma-separated task types) as a set; None keeps every type."""
    if value is None or not value.strip():
        return None
    kinds = frozenset(k.strip() for k in value.split(",") if k.strip())
    unknown = sorted(kinds - set(TASK_TYPES))
    if unknown:
        raise OptionError(f"training_export_task {', '.join(unknown)}: expected task types among "
                          f"{', '.join(TASK_TYPES)}")
    return kinds


def _check_tasks(value: str) -> str:
    task_filter(value)
    return value


CLIP_FPS: ExtraOption[int | None] = ExtraOption(
    "clip_fps", int, None, "Re-encode clips at this rate (default: copy clips at the source rate).",
    low=1, high=MAX_CLIP_FPS)
TRAINING_EXPORT_TASK: ExtraOption[str | None] = ExtraOption(
    "training_export_task", str, None, f"Annotation task types to export, comma-separated ({', '.join(TASK_TYPES)}; "
    "default: all).", check=_check_tasks)
OPTIONS = (CLIP_FPS, TRAINING_EXPORT_TASK)


@dataclass
class Package:
    """Everything the formats share: annotation entries, clips cut into `work`, per-scene accounts."""

    work: Path
    entries: list[dict[str, Any]] = field(default_factory=list)
    clips: list[str] = field(default_factory=list)  # clip paths relative to the format folder, in order
    scene_clips: dict[str, list[str]] = field(default_factory=dict)
    frames: int = 0
    copied: int = 0
    warnings: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (scene id, reason)


def build(scenes: Sequence[Scene], work: Path, options: WriterOptions) -> Package:
    """Entries and clips of every scene's items (kept task types only); clips shared by items are cut once."""
    tasks = task_filter(options.value(TRAINING_EXPORT_TASK))
    fps = options.value(CLIP_FPS)
    pkg = Package(work)
    (work / CLIPS).mkdir(parents=True, exist_ok=True)
    names: set[str] = set()
    for scene in scenes:
        items = [i for i in scene.items if tasks is None or i.task in tasks]
        if not items:
            pkg.skipped.append((scene.id, f"no item of task type(s) {', '.join(sorted(tasks or ()))}"))
            continue
        cut: dict[tuple[str, float, float], tuple[str, ClipResult] | None] = {}
        for item in items:
            key = (item.camera, item.start, item.end)
            if key not in cut:
                cut[key] = _cut(scene, item, work, names, fps, options.image_size, pkg)
            done = cut[key]
            if done is not None:
                pkg.entries.append(_entry(scene, item, *done))
        written = [name for name, _ in filter(None, cut.values())]
        if written:
            pkg.scene_clips[scene.id] = written
        else:
            pkg.skipped.append((scene.id, "no clip could be written"))
    return pkg


def _clip_name(scene: Scene, item: Item, names: set[str]) -> str:
    """`clips/<scene>_<camera>_<start ms>-<end ms>.mp4`, made of safe characters and unique in the export."""
    stem = "".join(c if c.isalnum() or c in "-." else "_" for c in f"{scene.id}_{item.camera}")[:150]
    stem = f"{stem}_{round(item.start * 1000):07d}-{round(item.end * 1000):07d}"
    name, n = f"{CLIPS}/{stem}.mp4", 1
    while name.lower() in names:
        n += 1
        name = f"{CLIPS}/{stem}_{n}.mp4"
    names.add(name.lower())
    return name


def _cut(scene: Scene, item: Item, work: Path, names: set[str], fps: int | None, size: tuple[int, int] | None,
         pkg: Package) -> tuple[str, ClipResult] | None:
    name = _clip_name(scene, item, names)
    try:
        result = write_clip(scene.media[item.camera], item.start, item.end, work / name, fps, size)
    except RobokitError as exc:
        pkg.warnings.append(f"scene {scene.id}: {item.origin}: item {item.id!r} skipped: {exc}")
        return None
    pkg.clips.append(name)
    pkg.frames += result.frames
    pkg.copied += result.copied
    return name, result


def _entry(scene: Scene, item: Item, video: str, clip: ClipResult) -> dict[str, Any]:
    """One LLaVA conversation, with where its clip comes from."""
    media = scene.media[item.camera]
    return {
        "id": f"{scene.id}-{item.id}",
        "video": video,
        "conversations": [{"from": "human", "value": f"<video>\n{item.question}"},
                          {"from": "gpt", "value": item.answer}],
        "metadata": {"scene": scene.id, "item": item.id, "task": item.task, "camera": item.camera,
                     "start": item.start, "end": item.end, "clip_start": round(clip.start, 6),
                     "clip_end": round(clip.end, 6), "clip_frames": clip.frames,
                     "clip": "copied" if clip.copied else "encoded", "source": media.source,
                     "source_version": media.version, "scene_path": str(scene.path)},
    }


class ReasoningWriter:
    """A reasoning-VLM format: packages a shared `Package` into its own folder (see `write_annotated`)."""

    name = ""
    description = ""
    extra_options = OPTIONS
    clip_files = False  # whether clips are files of the format folder (else they are inside an archive)

    def write(self, episodes: Sequence[Episode], out_dir: Path, options: WriterOptions) -> WriteResult:
        raise ConversionError(f"{self.name} writes completed scenes: give scene folders (task/, media/)")

    def check_options(self, options: WriterOptions) -> None:
        """H.264 clips (4:2:0) need an even width and height."""
        if options.image_size and any(side % 2 for side in options.image_size):
            w, h = options.image_size
            raise OptionError(f"image_size {w}x{h}: {self.name} clips need an even width and height")

    def package(self, pkg: Package, folder: Path) -> list[str]:
        """Write the format's files into the (staging) `folder`; returns their paths relative to it."""
        raise NotImplementedError

    def check(self, format_dir: Path) -> list[str]:
        """Problems of a written folder: annotations that do not load, or `video` paths with no clip."""
        try:
            entries = json.loads((format_dir / ANNOTATIONS).read_text())
        except (OSError, ValueError) as exc:
            return [f"{ANNOTATIONS}: {exc}"]
        if not isinstance(entries, list) or not entries:
            return [f"{ANNOTATIONS}: expected a non-empty list of conversations"]
        held = self.videos(format_dir)
        return [f"{e.get('id')}: video {e.get('video')!r} is missing" for e in entries
                if not isinstance(e, dict) or e.get("video") not in held]

    def videos(self, format_dir: Path) -> set[str]:
        raise NotImplementedError


def _annotations(pkg: Package, folder: Path) -> str:
    (folder / ANNOTATIONS).write_text(json.dumps(pkg.entries, indent=1, ensure_ascii=False) + "\n")
    return ANNOTATIONS


class CosmosReasonWriter(ReasoningWriter):
    name = "cosmos-reason-v1.0"
    description = "Cosmos-Reason post-training set: annotations.json (LLaVA) + clips/*.mp4"
    clip_files = True

    def package(self, pkg: Package, folder: Path) -> list[str]:
        (folder / CLIPS).mkdir()
        for clip in pkg.clips:
            _link(pkg.work / clip, folder / clip)
        return [_annotations(pkg, folder), *pkg.clips]

    def videos(self, format_dir: Path) -> set[str]:
        """The clips that open as video (PyAV finds a video stream in them)."""
        import av

        held = set()
        for clip in (format_dir / CLIPS).glob("*.mp4"):
            try:
                with av.open(str(clip)) as container:
                    if container.streams.video:
                        held.add(f"{CLIPS}/{clip.name}")
            except (av.FFmpegError, OSError):
                continue
        return held


class TaoVlReasonWriter(ReasoningWriter):
    name = "tao-vl-reason-v1.0"
    description = "TAO Cosmos-RL fine-tuning folder: annotations.json (LLaVA) + videos.tar.gz"

    def package(self, pkg: Package, folder: Path) -> list[str]:
        with open(folder / TARBALL, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz, \
                tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for clip in pkg.clips:  # reproducible members: no owner, no time
                info = tar.gettarinfo(str(pkg.work / clip), arcname=clip)
                info.mtime, info.uid, info.gid, info.uname, info.gname, info.mode = 0, 0, 0, "", "", 0o644
                with open(pkg.work / clip, "rb") as f:
                    tar.addfile(info, f)
        return [_annotations(pkg, folder), TARBALL]

    def videos(self, format_dir: Path) -> set[str]:
        try:
            with tarfile.open(format_dir / TARBALL) as tar:
                return {m.name for m in tar.getmembers() if m.isfile()}
        except (OSError, tarfile.TarError):
            return set()


def _link(src: Path, dst: Path) -> None:
    """A hard link where the file system allows one (clips are written once), else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def write_annotated(writers: Sequence[AnnotatedSceneWriter], scenes: Sequence[Scene], dest: Path,
                    options: WriterOptions) -> dict[str, WriteResult | RobokitError]:
    """Cut every clip once, then let each format package them into `<dest>/<format>/` (staged, then renamed)."""
    if not scenes:
        error = ConversionError("no completed scenes to export (folders with task/ and media/ or a recording)")
        return {w.name: error for w in writers}
    dest.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=staging_prefix("reasoning-clips"), dir=dest))
    try:
        pkg = build(scenes, work, options)
        results: dict[str, WriteResult | RobokitError] = {}
        for writer in writers:
            if not pkg.entries:
                reasons = "; ".join(f"{s}: {r}" for s, r in pkg.skipped) or "no items"
                results[writer.name] = ConversionError(f"no item could be exported ({reasons})")
                continue
            with staged_dir(dest / writer.name, overwrite=options.overwrite) as folder:
                files = writer.package(pkg, folder)
            results[writer.name] = WriteResult(
                files=files, episodes=len(pkg.scene_clips), frames=pkg.frames, warnings=list(pkg.warnings),
                skipped=list(pkg.skipped),
                episode_files={s: list(c) for s, c in pkg.scene_clips.items()} if writer.clip_files else {},
                contents={"scenes": len(pkg.scene_clips), "items": len(pkg.entries), "clips": len(pkg.clips),
                          "copied clips": pkg.copied})
        return results
    finally:
        shutil.rmtree(work, ignore_errors=True)


COSMOS_REASON = CosmosReasonWriter()
TAO_VL_REASON = TaoVlReasonWriter()
