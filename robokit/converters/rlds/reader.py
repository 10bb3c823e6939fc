"""RLDS datasets in TFDS prepared directories (robokit's own and TFDS-generated ones) as timeline episodes.

No TensorFlow: TFRecord framing and `tf.train.Example` are parsed by robokit, `features.json` gives
shapes and types. Step images become cameras (`<key>/rgb`, `<key>_depth` → `<key>/depth`), read
lazily from their record; `observation/state` → `joints/position`, a (P, C) tensor with a sibling
`<key>_count` → a point stream (robokit.converters.points), other step tensors keep their path
(`observation/` dropped); language instructions become the `task` channel. Channel and
dimension names robokit stored in feature descriptions are restored. Steps are placed on a grid at
the episode's stored `fps` and `grid_start_ns`, else 10 Hz from 0 (RLDS stores no times).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from robokit.converters.images import frame_layout
from robokit.converters.points import COUNT_SUFFIX, unpadded
from robokit.converters.rlds.example import Value, as_sequence, decode_example, read_features
from robokit.converters.rlds.features import Leaf, leaves
from robokit.converters.rlds.layout import DATASET_INFO, FEATURES, TEMPLATE, parse_description, shard_name
from robokit.converters.rlds.records import read_payload, record_offsets
from robokit.digest import source_digest
from robokit.errors import SourceError
from robokit.frames import from_order
from robokit.paths import dataset_files, inside
from robokit.sources.registry import ReadOptions
from robokit.timeline import (
    Episode,
    EpisodeMeta,
    EventStream,
    Frame,
    ImageStream,
    NumericStream,
    PoseStream,
    SkippedTopic,
    Stream,
    StreamOrigin,
)
from robokit.timeline.points import ArrayPointSource, PointStream

DEFAULT_FPS = 10.0
_LANGUAGE = ("steps/language_instruction", "steps/observation/natural_language_instruction")
_STRUCTURAL = ("steps/is_first", "steps/is_last")
_QUAT = {"qx", "qy", "qz", "qw"}
_SEMVER = re.compile(r"\d+\.\d+\.\d+")


@dataclass(frozen=True)
class RecordRef:
    """Where one episode's record lies: shard file, payload offset and length."""

    path: Path
    offset: int
    length: int

    def payload(self) -> bytes:
        return read_payload(self.path, self.offset, self.length)


@dataclass(frozen=True)
class RldsDataset:
    """One prepared dataset version: its info, stored leaves and, per split, the shard files and lengths."""

    root: Path
    info: dict[str, Any]
    leaves: dict[str, Leaf]
    splits: dict[str, list[tuple[Path, int]]]

    @property
    def name(self) -> str:
        return str(self.info.get("name", self.root.parent.name))

    def records(self, split: str) -> Iterator[RecordRef]:
        """The records of a split in order (headers read, payloads not)."""
        for path, _ in self.splits[split]:
            if not path.is_file():
                raise SourceError(f"{path}: shard listed in {DATASET_INFO} is missing")
            for offset, length in record_offsets(path):
                yield RecordRef(path, offset, length)


def _splits(path: Path, splits: Any) -> list[dict[str, Any]]:
    """The `splits` of dataset_info.json, their types checked (a damaged file names its field)."""
    if not isinstance(splits, list):
        raise SourceError(f"{path}: splits must be a list, got {splits!r:.40}")
    for n, split in enumerate(splits):
        where = f"{path}: splits[{n}]"
        if not isinstance(split, dict) or not isinstance(split.get("name"), str):
            raise SourceError(f"{where} must be an object with a string name")
        lengths = split.get("shardLengths", [])
        if not isinstance(lengths, list) or not all(_count(n) for n in lengths):
            raise SourceError(f"{where}.shardLengths must be a list of record counts, got {lengths!r:.60}")
        if not isinstance(split.get("filepathTemplate") or "", str):
            raise SourceError(f"{where}.filepathTemplate must be a string")
    return splits


def _count(value: Any) -> bool:
    """Whether a JSON value is a count (a non-negative integer, TFDS writes them as strings too)."""
    return isinstance(value, int | str) and not isinstance(value, bool) and str(value).isdigit()


def load_dataset(root: Path, allow_outside: bool = False) -> RldsDataset:
    """Read dataset_info.json and features.json of a version folder; SourceError when they are unusable or
    name shards outside the folder."""
    try:
        info = json.loads((root / DATASET_INFO).read_text())
        features_path = root / FEATURES
        node = json.loads(features_path.read_text()) if features_path.is_file() else info.get("features")
    except (OSError, ValueError) as exc:
        raise SourceError(f"{root}: not a readable TFDS dataset ({exc})") from exc
    if not isinstance(info, dict):
        raise SourceError(f"{root / DATASET_INFO}: expected a JSON object, got {type(info).__name__}")
    if not isinstance(node, dict):
        raise SourceError(f"{root}: no features.json (a dataset from TFDS 3.2 or older?)")
    file_format = info.get("fileFormat", "tfrecord") or "tfrecord"
    if file_format != "tfrecord":
        raise SourceError(f"{root}: file format {file_format!r} is not supported (only tfrecord)")
    name = str(info.get("name", root.parent.name))
    splits: dict[str, list[tuple[Path, int]]] = {}
    for split in _splits(root / DATASET_INFO, info.get("splits", [])):
        lengths = [int(n) for n in split.get("shardLengths", [])]
        template = split.get("filepathTemplate") or TEMPLATE
        splits[split["name"]] = [(inside(root, shard_name(name, split["name"], i, len(lengths), template, file_format),
                                         f"{root / DATASET_INFO} filepathTemplate", allow_outside), n)
                                 for i, n in enumerate(lengths)]
    try:
        found = leaves(node)
    except (AttributeError, TypeError, KeyError, ValueError) as exc:  # a field of the wrong JSON type
        raise SourceError(f"{root}: malformed feature description ({type(exc).__name__}: {exc})") from exc
    if "steps/is_first" not in found and not any(leaf.sequence_rank for leaf in found.values()):
        raise SourceError(f"{root}: not an RLDS dataset (no `steps` sequence in features.json)")
    return RldsDataset(root, info, found, splits)


def version_dirs(path: Path) -> list[Path]:
    """Version folders at or below `path` (depth ≤ 3); the newest version of each dataset."""
    if (path / DATASET_INFO).is_file():
        return [path]
    found = sorted(p.parent for pattern in ("*/", "*/*/", "*/*/*/") for p in path.glob(pattern + DATASET_INFO))
    newest: dict[Path, Path] = {}
    for d in found:
        key = d.parent if _SEMVER.fullmatch(d.name) else d
        if key not in newest or _semver(d.name) > _semver(newest[key].name):
            newest[key] = d
    return sorted(newest.values())


def _semver(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in name.split(".")) if _SEMVER.fullmatch(name) else ()


class RecordFrames:
    """Frames of one image feature of one record, re-read from the shard on each pass (nothing cached)."""

    def __init__(self, record: RecordRef, key: str) -> None:
        self._record = record
        self._key = key

    def iter_frames(self, positions: Iterable[int]) -> Iterator[Frame]:
        images = as_sequence(decode_example(self._record.payload(), {self._key}).get(self._key, []))
        for p in positions:
            yield encoded_frame(images[int(p)])


def encoded_frame(data: bytes) -> Frame:
    """A Frame of stored image bytes, its format told by the magic bytes."""
    fmt = "jpeg" if data[:2] == b"\xff\xd8" else "png" if data[:4] == b"\x89PNG" else "encoded"
    return Frame(fmt, data=data)


def step_count(leaves_: dict[str, Leaf], values: dict[str, Value]) -> int:
    """T of an episode: the length of `is_first`, else of the first step leaf present."""
    for key in ("steps/is_first", *sorted(k for k, leaf in leaves_.items() if leaf.sequence_rank == 1)):
        if key in values:
            value, leaf = values[key], leaves_[key]
            per_step = int(np.prod(leaf.shape)) if leaf.kind == "tensor" and leaf.encoding == "none" else 1
            return len(value) // max(1, per_step)
    return 0


def _channel(leaf: Leaf) -> str:
    described = parse_description(leaf.doc)
    if described:
        return described[0]
    rel = leaf.key.removeprefix("steps/")
    if rel == "observation/state":
        return "joints/position"
    rel = rel.removeprefix("observation/")
    if leaf.kind == "image":
        name = rel.replace("/", "_")
        return f"{name.removesuffix('_depth')}/depth" if name.endswith("_depth") else f"{name}/rgb"
    return rel


def _tensor(leaf: Leaf, value: Value, n: int) -> np.ndarray | None:
    """(T, D) values of a step tensor, None when its layout is not a fixed shape per step."""
    if any(d < 0 for d in leaf.shape) or leaf.dtype == "string":
        return None
    width = int(np.prod(leaf.shape))
    if leaf.encoding in ("bytes", "zlib"):
        items = as_sequence(value)
        raw = [zlib.decompress(b) if leaf.encoding == "zlib" else b for b in items]
        arrays = [np.frombuffer(b, dtype=np.dtype(leaf.dtype).newbyteorder("<")) for b in raw]
        return np.stack(arrays).reshape(n, width) if arrays else np.zeros((0, width))
    if not isinstance(value, np.ndarray) or len(value) != n * width:
        return None
    return value.reshape(n, width)


def episode_streams(ds: RldsDataset, record: RecordRef) -> tuple[dict[str, Stream], list[SkippedTopic], list[str]]:
    """Streams of one episode record."""
    images = {k for k, leaf in ds.leaves.items() if leaf.kind == "image" and leaf.sequence_rank == 1}
    payload = record.payload()
    values = decode_example(payload, set(ds.leaves) - images)
    n = step_count(ds.leaves, values)
    meta = episode_metadata(ds, values)
    warnings: list[str] = []
    fps = float(meta.get("fps") or 0) or DEFAULT_FPS
    if not meta.get("fps"):
        warnings.append(f"{ds.root}: no frame rate stored; steps placed {1 / DEFAULT_FPS:g} s apart")
    start = int(meta.get("grid_start_ns") or 0)
    times = start + np.round(np.arange(n) * (1e9 / fps)).astype(np.int64)
    streams: dict[str, Stream] = {}
    skipped: list[SkippedTopic] = []
    clouds = {k for k, leaf in ds.leaves.items() if leaf.kind == "tensor" and len(leaf.shape) == 2
              and k + COUNT_SUFFIX in ds.leaves and leaf.shape[0] >= 0 and leaf.shape[1] >= 3}
    frames = decode_example(payload, images) if images else {}  # only to size cameras; frames re-read lazily
    del payload
    for key, leaf in sorted(ds.leaves.items()):
        if leaf.sequence_rank != 1 or key in _STRUCTURAL:
            continue
        origin = StreamOrigin(key, f"rlds/{leaf.kind}", "log")
        channel = _channel(leaf)
        if leaf.kind == "image":
            streams[channel] = _camera(channel, leaf, as_sequence(frames.get(key, [])), record, times, origin)
        elif leaf.kind == "text" and key in _LANGUAGE:
            streams["task"] = _task(values.get(key, []), times, origin)
        elif leaf.kind == "text":
            texts = [b.decode("utf-8", "replace") for b in as_sequence(values.get(key, []))]
            streams[channel] = EventStream(channel, times[: len(texts)], origin=origin, values=tuple(texts))
        elif key in clouds or key.removesuffix(COUNT_SUFFIX) in clouds:
            if key in clouds:
                streams[channel] = _points(channel, leaf, values, n, times, origin)
        elif leaf.kind == "tensor" and (array := _tensor(leaf, values.get(key, np.zeros(0)), n)) is not None:
            streams[channel] = _numeric(channel, leaf, array, times, origin)
        else:
            skipped.append(SkippedTopic(key, f"rlds/{leaf.kind}", "unsupported feature layout", n))
    return streams, skipped, warnings


def _camera(channel: str, leaf: Leaf, frames: Sequence[bytes], record: RecordRef, times: np.ndarray,
            origin: StreamOrigin) -> ImageStream:
    h, w, c = (*leaf.shape, 0, 0, 0)[:3]
    if (h <= 0 or w <= 0) and frames:
        h, w, c, _ = frame_layout(encoded_frame(frames[0]))
    encoding = "16UC1" if leaf.dtype == "uint16" else {1: "mono8", 4: "rgba8"}.get(c, "rgb8")
    fmt = encoded_frame(frames[0]).format if frames else leaf.format or "png"
    return ImageStream(channel, times[: len(frames)], origin=origin, source=RecordFrames(record, leaf.key),
                       positions=np.arange(len(frames)), width=w, height=h, encoding=encoding, format=fmt)


def _points(channel: str, leaf: Leaf, values: dict[str, Value], n: int, times: np.ndarray,
            origin: StreamOrigin) -> PointStream:
    """A padded point feature and its counts as a point stream (fields from its description)."""
    size, width = leaf.shape
    flat = values.get(leaf.key, np.zeros(0))
    array = np.asarray(flat, dtype=np.float32).reshape(n, size, width) if np.size(flat) == n * size * width \
        else np.zeros((n, size, width), dtype=np.float32)
    counts = np.asarray(values.get(leaf.key + COUNT_SUFFIX, np.zeros(n)), dtype=np.int64).reshape(-1)[:n]
    counts = np.concatenate([counts, np.zeros(n - len(counts), np.int64)]).clip(0, size)
    described = parse_description(leaf.doc)
    names = described[1] if described and len(described[1]) == width else ("x", "y", "z", *map(str, range(3, width)))
    return PointStream(channel, times, origin=origin, source=ArrayPointSource(unpadded(array, counts, names)),
                       counts=counts, fields=names)


def _task(value: Value, times: np.ndarray, origin: StreamOrigin) -> EventStream:
    """Language instructions as events where they change."""
    texts = [b.decode("utf-8", "replace") for b in as_sequence(value)]
    keep = [i for i, t in enumerate(texts) if t and (i == 0 or t != texts[i - 1])]
    return EventStream("task", times[keep], origin=origin, values=tuple(texts[i] for i in keep))


def _numeric(channel: str, leaf: Leaf, values: np.ndarray, times: np.ndarray, origin: StreamOrigin) -> Stream:
    described = parse_description(leaf.doc)
    names, frame = (described[1], described[2]) if described else ((), "")
    if len(names) == 7 and names[:3] == ("x", "y", "z") and set(names[3:]) == _QUAT:
        order = "".join(n[1] for n in names[3:])
        return PoseStream(channel, times, origin=origin, translation=values[:, :3],
                          quaternion=from_order(values[:, 3:], order), convention=frame or "rayform")
    return NumericStream(channel, times, origin=origin, values=values.astype(np.float64),
                         names=names if len(names) == values.shape[1] else ())


def episode_metadata(ds: RldsDataset, values: dict[str, Value]) -> dict[str, Any]:
    """Episode-level features by name (`episode_metadata/` dropped): str, number or list."""
    out: dict[str, Any] = {}
    for key, leaf in ds.leaves.items():
        if leaf.sequence_rank or key not in values:
            continue
        name = key.removeprefix("episode_metadata/")
        value = values[key]
        if isinstance(value, np.ndarray):
            out[name] = value.tolist() if leaf.shape else (value[0].item() if len(value) else None)
        else:
            out[name] = value[0].decode("utf-8", "replace") if len(value) == 1 else [v.decode() for v in value]
    return out


def read_episodes(root: Path, allow_outside: bool = False) -> list[Episode]:
    """Lazy episodes of every split of one dataset version (train first, then the others by name)."""
    ds = load_dataset(root, allow_outside)
    digest = source_digest(dataset_files(root, allow_outside), root)  # the shards too
    language = [k for k in _LANGUAGE if k in ds.leaves]
    episodes = []
    wanted = {*language, *(k for k, leaf in ds.leaves.items() if not leaf.sequence_rank)}
    for split in sorted(ds.splits, key=lambda s: (s != "train", s)):
        for index, record in enumerate(ds.records(split)):
            with record.path.open("rb") as f:
                values = read_features(f, record.offset, record.length, wanted)
            meta = episode_metadata(ds, values)
            tasks = tuple(dict.fromkeys(b.decode("utf-8", "replace") for k in language
                                        for b in as_sequence(values.get(k, [])) if b))
            tags = {k: v if isinstance(v, str) else json.dumps(v) for k, v in meta.items()}
            episode_id = str(meta.get("episode_id") or f"{ds.name}_{split}_{index:06d}")
            em = EpisodeMeta(source_uri=f"{root.resolve()}#split={split}&episode={index}", episode_id=episode_id,
                             source_version=digest, source_format="rlds", tasks=tasks,
                             robot_type=str(meta.get("robot_type") or ""), tags=tags)
            episodes.append(Episode(em, loader=partial(episode_streams, ds, record)))
    return episodes


class RldsReader:
    """TFDS prepared directories of RLDS episodes: a version folder, a dataset folder, or a folder of datasets."""

    name = "rlds"
    description = "RLDS/TFDS dataset folder (dataset_info.json, features.json, TFRecord shards)"

    def sniff(self, path: Path) -> bool:
        return path.is_dir() and bool(version_dirs(path))

    def read(self, path: Path, options: ReadOptions) -> list[Episode]:
        episodes = [ep for root in version_dirs(path) for ep in read_episodes(root, options.allow_outside)]
        if not episodes:
            raise SourceError(f"{path}: no episodes (the splits in {DATASET_INFO} list no records)")
        return episodes


RLDS_READER = RldsReader()
