"""The scene input contract: a completed scene folder (media, recordings, annotation task files) read into items.

A scene is a folder holding any of `scene.json`, `media/<camera>.mp4` and `task/<name>.json`; recordings
robokit reads anywhere in it add their cameras (`front/rgb` is camera `front`). Problems never raise for one
item: items, task files and cameras that cannot be used are dropped with a warning naming them, and a scene
with nothing usable raises SceneError (the scene is skipped with that reason).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robokit.digest import source_digest
from robokit.errors import RobokitError, SourceError
from robokit.limits import MAX_TEXT
from robokit.sources import iter_readers, open_episodes
from robokit.sources.sniff import SCENE_MARKERS
from robokit.timeline.streams import ImageStream

TASK_TYPES = ("reasoning", "caption", "mcq")
DEFAULT_CAPTION_QUESTION = "Describe what happens in this video."
SPAN_TOLERANCE_S = 1e-3  # spans may reach this far past the media's end (rounding of annotation tools)
MAX_CHOICES = 26  # MCQ choices are lettered A to Z
MAX_DEPTH = 4  # folder levels searched for recordings
MAX_JSON_BYTES = 256 << 20  # task files and scene.json are read whole: bounded
# Codecs whose clips are encoded to H.264 rather than copied: the video readers of Qwen-VL / Cosmos-Reason
# training (decord's bundled FFmpeg) cannot decode them.
UNCOPIED_CODECS = ("av1",)


class SceneError(SourceError):
    """A scene that cannot be exported at all (no task files, no media, no item left)."""


@dataclass(frozen=True)
class Media:
    """One camera of a scene: an encoded video file, or the frames of a recording's camera stream.

    Times of items are seconds from `start_s` (the media's first frame, in the media's own clock).
    """

    camera: str
    source: str  # the file (relative to the scene folder) it comes from
    version: str  # content digest of that file or recording
    duration_s: float
    start_s: float = 0.0
    path: Path | None = None  # an encoded video (clips are copied from it)
    stream: ImageStream | None = None  # frames of a recording (encoded when there is no `path`)
    offset_s: float = 0.0  # where the media starts in `path` (a recording's episode inside a longer video)
    codec: str = ""  # of `path`

    @property
    def copyable(self) -> bool:
        """Whether clips can be stream-copied from `path` (and VLM video readers decode them)."""
        return self.path is not None and self.codec not in UNCOPIED_CODECS


@dataclass(frozen=True)
class Item:
    """One annotation: the clip it is about and its question/answer turn, already in the training text."""

    task: str
    id: str
    camera: str
    start: float
    end: float
    question: str
    answer: str
    origin: str  # task file name, for messages


@dataclass
class Scene:
    id: str
    path: Path
    media: dict[str, Media]
    items: list[Item]
    warnings: list[str] = field(default_factory=list)


def read_scene(path: Path, tasks: frozenset[str] | None = None) -> Scene:
    """The scene in folder `path` with items of `tasks` (None: every supported type); SceneError if none."""
    warnings: list[str] = []
    scene_id = _scene_id(path, warnings)
    task_files = sorted((path / "task").glob("*.json")) if (path / "task").is_dir() else []
    if not task_files:
        raise SceneError(f"scene {scene_id}: no task files (task/<name>.json)")
    media = _media(path, warnings)
    if not media:
        raise SceneError(f"scene {scene_id}: no media (media/<camera>.mp4 or a recording with cameras)"
                         + "".join(f"; {w}" for w in warnings))
    items: list[Item] = []
    for file in task_files:
        items += _task_items(file, media, tasks, warnings)
    seen: set[str] = set()
    unique = []
    for item in items:
        if item.id in seen:
            warnings.append(f"{item.origin}: item {item.id!r} skipped: its id is used by an earlier item")
            continue
        seen.add(item.id)
        unique.append(item)
    if not unique:
        wanted = f" of task type(s) {', '.join(sorted(tasks))}" if tasks is not None else ""
        raise SceneError(f"scene {scene_id}: no usable item{wanted} ({'; '.join(warnings) or 'task files are empty'})")
    return Scene(scene_id, path, media, unique, warnings)


def _scene_id(path: Path, warnings: list[str]) -> str:
    meta = path / "scene.json"
    if not meta.is_file():
        return path.name
    data = _read_json(meta, warnings)
    value = data.get("scene_id") if isinstance(data, dict) else None
    if value is None:
        return path.name
    if not _is_text(value) or not value.strip():
        warnings.append(f"scene.json: scene_id {str(value)[:80]!r} is not usable text; using the folder name")
        return path.name
    return str(value)


def _read_json(file: Path, warnings: list[str]) -> Any:
    try:
        if file.stat().st_size > MAX_JSON_BYTES:
            warnings.append(f"{file.parent.name}/{file.name}: skipped: larger than {MAX_JSON_BYTES >> 20} MiB")
            return None
        return json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        warnings.append(f"{file.parent.name}/{file.name}: skipped: not readable JSON ({exc})")
        return None


def _is_text(value: Any, limit: int = MAX_TEXT) -> bool:
    return isinstance(value, str) and len(value) <= limit and not any(ord(c) < 32 and c not in "\n\t" for c in value)


# --- media ------------------------------------------------------------------------------------------------


def _media(scene: Path, warnings: list[str]) -> dict[str, Media]:
    """Cameras of the scene: media/<camera>.* files first, then cameras of recordings (first one wins)."""
    media: dict[str, Media] = {}
    folder = scene / "media"
    for file in sorted(folder.iterdir()) if folder.is_dir() else []:
        if file.is_file() and not file.name.startswith("."):
            if file.stem in media:
                warnings.append(f"media/{file.name}: skipped: {media[file.stem].source} is camera {file.stem!r}")
                continue
            try:
                media[file.stem] = probe_video(file, file.stem, f"media/{file.name}")
            except SourceError as exc:
                warnings.append(f"media/{file.name}: skipped: {exc}")
    for recording in _recordings(scene, 0):
        for cam in _recording_media(scene, recording, warnings):
            if cam.camera in media:
                warnings.append(f"{cam.source}: camera {cam.camera!r} skipped: {media[cam.camera].source} gives it")
            else:
                media[cam.camera] = cam
    for cam in media.values():
        if cam.path is not None and not cam.copyable:
            warnings.append(f"{cam.source}: camera {cam.camera!r} is {cam.codec} video, which the VLM video readers "
                            "(decord) cannot decode: its clips are encoded to H.264, not copied")
    return media


def probe_video(file: Path, camera: str, source: str) -> Media:
    """A video file's camera entry (start and duration of its first video stream); SourceError if unreadable."""
    import av

    try:
        with av.open(str(file)) as container:
            if not container.streams.video:
                raise SourceError("no video stream")
            stream = container.streams.video[0]
            codec = stream.codec_context.codec.canonical_name
            tb = stream.time_base
            start = float((stream.start_time or 0) * tb) if tb is not None else 0.0
            if stream.duration is not None and tb is not None:
                duration = float(stream.duration * tb)
            else:
                duration = float(container.duration or 0) / 1e6
    except SourceError:
        raise
    except (av.FFmpegError, OSError, ValueError) as exc:
        raise SourceError(f"not a video PyAV reads ({exc})") from exc
    if not duration > 0 or not math.isfinite(duration):
        raise SourceError("the video has no duration")
    return Media(camera, source, source_digest([file], file.parent), duration, start, path=file, codec=codec)


def _recordings(folder: Path, depth: int) -> Iterator[Path]:
    """Recordings robokit reads under `folder` (not inside media/ or task/), searched `MAX_DEPTH` levels deep."""
    for child in sorted(folder.iterdir()):
        if child.name.startswith(".") or (depth == 0 and child.name in SCENE_MARKERS) or child.is_symlink():
            continue
        try:
            sniffed = any(r.sniff(child) for r in iter_readers())
        except (OSError, RobokitError):
            sniffed = False
        if sniffed:
            yield child
        elif child.is_dir() and depth + 1 < MAX_DEPTH:
            yield from _recordings(child, depth + 1)


def _recording_media(scene: Path, recording: Path, warnings: list[str]) -> list[Media]:
    """The colour cameras of a recording (a camera per channel; depth streams are no video)."""
    source = recording.relative_to(scene).as_posix()
    try:
        episodes = open_episodes(recording)
        files = [recording] if recording.is_file() else sorted(f for f in recording.rglob("*") if f.is_file())
        version = source_digest(files, scene)
        out = []
        for ep in episodes:
            for channel, stream in ep.cameras.items():
                if stream.is_depth or len(stream) == 0:
                    if stream.is_depth:
                        warnings.append(f"{source}: {channel} left out (depth is not a camera view)")
                    continue
                camera = channel.removesuffix("/rgb")
                if len(episodes) > 1:
                    camera = f"{ep.id}/{camera}"
                period = (stream.end_ns - stream.start_ns) / max(len(stream) - 1, 1) / 1e9
                duration = (stream.end_ns - stream.start_ns) / 1e9 + (period if len(stream) > 1 else 0.0)
                video = _encoded_video(stream)
                out.append(Media(camera, source, version, max(duration, 1e-9), stream.start_ns / 1e9,
                                 path=video[0] if video else None, stream=stream,
                                 offset_s=video[1] if video else 0.0, codec=_codec(video[0]) if video else ""))
        return out
    except RobokitError as exc:
        warnings.append(f"{source}: recording skipped: {exc}")
        return []


def _encoded_video(stream: ImageStream) -> tuple[Path, float] | None:
    """The video file a camera's frames are a contiguous run of (LeRobot videos), if the reader says so."""
    video: tuple[Path, float] | None = getattr(stream.source, "encoded_video", None)
    contiguous = bool(len(stream.positions)) and bool((stream.positions == range(len(stream.positions))).all())
    return video if video is not None and contiguous and video[0].is_file() else None


def _codec(file: Path) -> str:
    """The canonical codec name of a file's first video stream ("" when it cannot be told)."""
    import av

    try:
        with av.open(str(file)) as container:
            return str(container.streams.video[0].codec_context.codec.canonical_name)
    except (av.FFmpegError, OSError, IndexError):
        return ""


# --- task files ---------------------------------------------------------------------------------------------


def _task_items(file: Path, media: dict[str, Media], tasks: frozenset[str] | None,
                warnings: list[str]) -> list[Item]:
    origin = f"task/{file.name}"
    data = _read_json(file, warnings)
    if data is None:
        return []
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        warnings.append(f"{origin}: skipped: expected {{\"task\": ..., \"version\": 1, \"items\": [...]}}")
        return []
    kind = data.get("task")
    if kind not in TASK_TYPES:
        warnings.append(f"{origin}: skipped: unknown task type {str(kind)[:80]!r} (supported: {', '.join(TASK_TYPES)})")
        return []
    if data.get("version", 1) != 1:
        warnings.append(f"{origin}: skipped: task file version {str(data.get('version'))[:20]!r} (supported: 1)")
        return []
    if tasks is not None and kind not in tasks:
        return []
    items = []
    for n, raw in enumerate(data["items"]):
        try:
            items.append(_item(kind, raw, media, origin))
        except ValueError as exc:
            label = raw.get("id") if isinstance(raw, dict) and _is_text(raw.get("id"), 200) else f"#{n}"
            warnings.append(f"{origin}: item {label!r} skipped: {exc}")
    return items


def _text(raw: dict[str, Any], key: str, limit: int = 1_000_000) -> str:
    value = raw.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool) and key in ("id", "answer"):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key!r} must be non-empty text")
    if len(value) > limit:
        raise ValueError(f"{key!r} is longer than {limit} characters")
    return value


def _time(raw: dict[str, Any], key: str, default: float) -> float:
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{key!r} must be a number of seconds, got {str(value)[:40]!r}")
    return float(value)


def _item(kind: str, raw: Any, media: dict[str, Media], origin: str) -> Item:
    """One task item checked against the scene's media; ValueError says why it cannot be used."""
    if not isinstance(raw, dict):
        raise ValueError("not an object")
    item_id = _text(raw, "id", 200)
    if not _is_text(item_id, 200):
        raise ValueError("'id' holds control characters")
    camera = raw.get("camera")
    if not isinstance(camera, str) or camera not in media:
        raise ValueError(f"camera {str(camera)[:80]!r} is not in the scene (cameras: {', '.join(sorted(media))})")
    cam = media[camera]
    start, end = _time(raw, "start", 0.0), _time(raw, "end", cam.duration_s)
    if not 0 <= start < end <= cam.duration_s + SPAN_TOLERANCE_S:
        raise ValueError(f"span {start:g}-{end:g} s lies outside the {cam.duration_s:g} s of camera {camera!r}")
    end = min(end, cam.duration_s)
    if kind == "reasoning":
        question = _text(raw, "question")
        answer = f"<think>\n{_text(raw, 'reasoning')}\n</think>\n\n<answer>\n{_text(raw, 'answer')}\n</answer>"
    elif kind == "caption":
        question = _text(raw, "question") if raw.get("question") is not None else DEFAULT_CAPTION_QUESTION
        answer = _text(raw, "caption")
    else:
        question, answer = _mcq(raw)
    return Item(kind, item_id, str(camera), start, end, question, answer, origin)


def _mcq(raw: dict[str, Any]) -> tuple[str, str]:
    """The question with its lettered choices, and the answer's letter (given as a letter or a choice's text)."""
    choices = raw.get("choices")
    if not isinstance(choices, list) or not 2 <= len(choices) <= MAX_CHOICES:
        raise ValueError(f"'choices' must be a list of 2 to {MAX_CHOICES} texts")
    texts = [_text({"choice": c}, "choice") for c in choices]
    letters = [chr(ord("A") + i) for i in range(len(texts))]
    answer = _text(raw, "answer").strip()
    if answer.upper() in letters and len(answer) == 1:
        letter = answer.upper()
    elif answer in texts:
        letter = letters[texts.index(answer)]
    else:
        raise ValueError(f"answer {answer[:80]!r} is neither a choice letter ({letters[0]}-{letters[-1]}) "
                         "nor one of the choices")
    lines = [_text(raw, "question")] + [f"{letter}. {text}" for letter, text in zip(letters, texts, strict=True)]
    return "\n".join(lines), letter
