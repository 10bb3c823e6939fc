"""RLDS writer: a TFDS prepared directory `<out>/rlds/<name>/<version>/`, one episode per TFRecord record.

Steps follow the rlds_dataset_builder schema (`observation/<camera>` JPEG/PNG, `observation/state`,
`action`, `reward`, `discount`, `is_first`/`is_last`/`is_terminal`, `language_instruction`), one step field per
extra (a source feature such as LeRobot's `next.reward` → `next_reward`: floats as float32, as Examples store them;
its source key, dtype and names in `metadata.json`; see converters/extras), plus `episode_metadata` with the source
path and traceability fields. A point stream is `observation/<name>`, a (P, C) float32 tensor padded with zeros to
the dataset's largest cloud P, with `observation/<name>_count` (int32) giving the points of each step
(robokit.converters.points). Demonstrations end in their goal,
so the last step is terminal with reward 1 (the builder template's convention); discount is 1.
Records are encoded without TensorFlow (per episode, in any process) and streamed into size-targeted shards;
one encoded episode per worker is the most held in memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from robokit.converters.actions import ActionMeaning, meaning_of
from robokit.converters.episodes import trace
from robokit.converters.extras import field_names
from robokit.converters.images import (
    IMAGE_FORMAT,
    IMAGE_OPTIONS,
    JPEG_QUALITY,
    ImageSpec,
    camera_specs,
)
from robokit.converters.options import WriterOptions
from robokit.converters.points import (
    capacity,
    frame_label,
    grid_notes,
    padded,
    point_key,
    point_streams,
    prepared_clouds,
)
from robokit.converters.prepare import PreparedEpisode
from robokit.converters.registry import ExtraOption, WriteResult
from robokit.converters.rlds import features as ft
from robokit.converters.rlds.example import Feature, encode_example
from robokit.converters.rlds.layout import (
    DATASET_INFO,
    FEATURES,
    FILE_FORMAT,
    METADATA,
    dataset_name,
    describe,
    shard_name,
    split_entry,
    version,
)
from robokit.converters.rlds.records import framed_size, write_record
from robokit.converters.shards import Shard, ShardSet, item_shards, shard_bytes
from robokit.converters.spill import Payload
from robokit.converters.staging import staged_dir
from robokit.converters.streaming import Encoded, EpisodeContext, accepted, prepared_signature, write_streaming
from robokit.converters.vectors import pose_key, pose_names, pose_vectors
from robokit.errors import OptionError
from robokit.timeline import Episode

DATASET_NAME = ExtraOption("dataset_name", str, "robokit",
                           "Dataset name (snake_case for RLDS): DIR/rlds/<name>/<version>/.", check=dataset_name)
RLDS_VERSION = ExtraOption("rlds_version", str, "1.0.0", "RLDS dataset version (X.Y.Z).", check=version)
RLDS_SHARD_MB = ExtraOption("rlds_shard_mb", float, 256.0, "Target TFRecord shard size in MB (at most 1024).",
                            low=0, high=1024, above=True)
SPLIT = ExtraOption("split", float, 0.0, "Fraction of episodes written to an RLDS `val` split (0: the recorded split, "
                    "e.g. robomimic `mask/valid`, else train only; below 1).",
                    low=0, high=1, check=lambda ratio: split_ratio(ratio))
EXTRA_OPTIONS = (DATASET_NAME, RLDS_VERSION, RLDS_SHARD_MB, SPLIT, *IMAGE_OPTIONS)

_STEP_FIELDS = ("observation", "action", "reward", "discount", "is_first", "is_last", "is_terminal",
                "language_instruction")
NO_ACTION = "No action: the source recorded none and none was asked for (--action)."


def split_ratio(ratio: float) -> float:
    """Validate the `split` option: the fraction of episodes in the `val` split, below 1 (train is never empty)."""
    if not 0.0 <= ratio < 1.0:
        raise OptionError(f"split {ratio:g}: expected a fraction in [0, 1) for the val split")
    return ratio


def val_indices(count: int, ratio: float) -> set[int]:
    """Input indices of the `val` episodes: round(count·ratio) of them (at least one), spread evenly."""
    split_ratio(ratio)
    if ratio == 0.0 or count < 2:
        return set()
    n = min(count - 1, max(1, round(count * ratio)))
    return {int((k + 0.5) * count / n) for k in range(n)}


def recorded_val(episodes: Sequence[Episode]) -> set[int]:
    """Input indices of episodes their reader tagged `split: valid|val` (robomimic `mask/valid`), when some
    but not all are (used when no `split` fraction is asked for)."""
    val = {i for i, ep in enumerate(episodes) if ep.meta.tags.get("split") in ("valid", "val")}
    return val if len(val) < len(episodes) else set()


@dataclass(frozen=True)
class _Settings:
    name: str
    version: str
    shard_bytes: int
    split: float
    image_format: str
    jpeg_quality: int

    @classmethod
    def from_options(cls, options: WriterOptions) -> _Settings:
        return cls(options.value(DATASET_NAME), options.value(RLDS_VERSION), shard_bytes(options.value(RLDS_SHARD_MB)),
                   options.value(SPLIT), options.value(IMAGE_FORMAT), options.value(JPEG_QUALITY))


@dataclass(frozen=True)
class _Schema:
    """The step and episode features of a dataset, fixed by its first episode."""

    cameras: dict[str, tuple[str, ImageSpec]]  # channel -> (feature key, spec)
    state: tuple[str, tuple[str, ...]]  # channel, dimension names
    action: tuple[str, tuple[str, ...]] | None  # None: no action recorded or asked for; steps have no `action`
    poses: dict[str, str]  # channel -> feature key
    quat_order: str
    frame: str
    action_meaning: ActionMeaning | None = None
    extras: dict[str, dict[str, Any]] = field(default_factory=dict)  # step field -> `Extra.describe()`
    points: dict[str, tuple[str, tuple[str, ...], str]] = field(default_factory=dict)  # channel -> key, fields, frame
    point_capacity: int = 0  # points per step of every point feature

    @classmethod
    def of(cls, p: PreparedEpisode, options: WriterOptions, settings: _Settings, capacity: int) -> _Schema:
        action = (p.action.name, p.action.names) if p.action is not None else None
        extras = {name: extra.describe() for name, extra in field_names(p.extras, _STEP_FIELDS).items()}
        points = {name: (point_key(name), s.fields, frame_label(s.frame_id, options.frame))
                  for name, s in point_streams(p.source).items()}
        return cls(camera_specs(p, settings.image_format), (p.state.name, p.state.names), action,
                   {name: pose_key(name) for name in sorted(p.poses)}, options.quat_order, options.frame,
                   meaning_of(p), extras, points, capacity)

    def _extra_node(self, name: str) -> ft.Node:
        extra = self.extras[name]
        dtype = extra["dtype"] if extra["dtype"] in ("bool", "int64") else (
            "int64" if extra["dtype"].startswith(("int", "uint")) else "float32")
        shape = () if extra["shape"] == [1] else (len(extra["flat_names"]),)
        return ft.tensor(shape, dtype, describe(extra["channel"], tuple(extra["flat_names"])))

    def node(self) -> ft.Node:
        """The features.json root."""
        observation: dict[str, ft.Node] = {
            key: ft.image(spec.shape, spec.dtype, spec.format, describe(channel))
            for channel, (key, spec) in self.cameras.items()}
        observation["state"] = ft.tensor((len(self.state[1]),), "float32", describe(*self.state))
        for channel, key in self.poses.items():
            observation[key] = ft.tensor((7,), "float32", describe(channel, pose_names(self.quat_order), self.frame))
        for channel, (key, fields, frame) in self.points.items():
            shape = (self.point_capacity, len(fields))
            observation[key] = ft.tensor(shape, "float32", describe(channel, fields))
            observation[f"{key}_count"] = ft.tensor((), "int32", f"Points of {key} in this step (later rows: zero "
                                                                 f"padding); frame: {frame}.")
        step = {
            "observation": ft.features_dict(observation),
            **({"action": ft.tensor((len(self.action[1]),), "float32", describe(*self.action))} if self.action else {}),
            "reward": ft.tensor((), "float32"),
            "discount": ft.tensor((), "float32"),
            "is_first": ft.tensor((), "bool"),
            "is_last": ft.tensor((), "bool"),
            "is_terminal": ft.tensor((), "bool"),
            "language_instruction": ft.text(),
            **{name: self._extra_node(name) for name in self.extras},
        }
        metadata = {
            "file_path": ft.text("Path or URI of the source recording."),
            "episode_id": ft.text(),
            "source": ft.text(),
            "segment": ft.tensor((2,), "int64", "First and last time (ns) in the source."),
            "segment_version": ft.text("Digest of the source recording."),
            "grid_start_ns": ft.tensor((), "int64", "Time (ns, UTC) of the first step."),
            "fps": ft.tensor((), "float32", "Steps per second."),
            "robot_type": ft.text(),
        }
        return ft.features_dict({"steps": ft.dataset(ft.features_dict(step)),
                                 "episode_metadata": ft.features_dict(metadata)})

    def example(self, p: PreparedEpisode, images: dict[str, Sequence[bytes]]) -> dict[str, Feature]:
        """The flat Example features of one episode."""
        n = p.n_frames
        last = np.zeros(n, dtype=bool)
        last[-1] = True
        first = np.zeros(n, dtype=bool)
        first[0] = True
        out: dict[str, Feature] = {
            "steps/observation/state": p.state.values,  # float32 a block at a time as written (encode_example)
            "steps/reward": last.astype(np.float32),
            "steps/discount": np.ones(n, dtype=np.float32),
            "steps/is_first": first,
            "steps/is_last": last,
            "steps/is_terminal": last,
            "steps/language_instruction": [p.task.encode()] * n,
        }
        for channel, (key, _) in self.cameras.items():
            out[f"steps/observation/{key}"] = images[channel]
        out.update({f"steps/observation/{key}": v for key, v in pose_vectors(p, self.quat_order).items()})
        clouds = prepared_clouds(p, self.frame)
        for channel, (key, names, _) in self.points.items():
            out[f"steps/observation/{key}"], out[f"steps/observation/{key}_count"] = padded(
                clouds[channel], self.point_capacity, len(names))
        if p.action is not None:
            out["steps/action"] = p.action.values
        extras = {extra["channel"]: name for name, extra in self.extras.items()}
        out.update({f"steps/{extras[e.channel]}": e.values for e in p.extras.values()})
        meta = p.source.meta
        fields = trace(p)
        out.update({
            "episode_metadata/file_path": [meta.source_uri.encode()],
            "episode_metadata/episode_id": [meta.episode_id.encode()],
            "episode_metadata/source": [str(fields["source"]).encode()],
            "episode_metadata/segment": np.asarray(fields["segment"], dtype=np.int64),
            "episode_metadata/segment_version": [str(fields["segment_version"]).encode()],
            "episode_metadata/grid_start_ns": np.asarray([int(p.timestamps[0])], dtype=np.int64),
            "episode_metadata/fps": np.asarray([p.fps], dtype=np.float32),
            "episode_metadata/robot_type": [meta.robot_type.encode()],
        })
        return out


class _Split:
    """The shards of one split and the payload bytes they hold (TFDS's numBytes)."""

    def __init__(self, root: Path, name: str, split: str, target: int) -> None:
        self.shards = ShardSet(root, target, lambda i, n: shard_name(name, split, i, n), label=split)
        self.num_bytes = 0

    def add(self, record: Payload, size: int) -> None:
        """One framed record (`record`) of a `size`-byte payload."""
        record.copy_to(self.shards.file_for(record.size))
        self.shards.added(record.size)
        self.num_bytes += size


@dataclass(frozen=True)
class _Plan:
    """What every episode's encoding shares: the options (with the action defaulted), settings, val indices."""

    options: WriterOptions
    settings: _Settings
    val: frozenset[int]
    warnings: tuple[str, ...]
    point_capacity: int = 0


class RldsWriter:
    """`--to rlds`: a TFDS/RLDS prepared dataset at `<out>/rlds/<name>/<version>/`."""

    name = "rlds"
    description = "RLDS episodes in a TFDS prepared directory (TFRecord shards, no TensorFlow needed)"
    extra_options = EXTRA_OPTIONS
    holds_points = True

    def write(self, episodes: Sequence[Episode], out_dir: Path, options: WriterOptions) -> WriteResult:
        return write_streaming(self, episodes, out_dir, options)

    def plan(self, episodes: Sequence[Episode], options: WriterOptions) -> _Plan:
        settings = _Settings.from_options(options)
        val = val_indices(len(episodes), settings.split) if settings.split else recorded_val(episodes)
        point_capacity, cut = capacity(episodes)
        return _Plan(options, settings, frozenset(val), tuple(cut), point_capacity)

    def encode(self, ctx: EpisodeContext, plan: _Plan) -> Encoded:
        """One episode as one framed TFRecord of a serialized `tf.train.Example` (its images encoded per step)."""
        p = ctx.prepared(plan.options)
        schema = _Schema.of(p, plan.options, plan.settings, plan.point_capacity)
        images = {channel: ctx.images(channel, p.cameras[channel], spec, plan.settings.jpeg_quality)
                  for channel, (_, spec) in schema.cameras.items()}
        chunks, size = encode_example(schema.example(p, images))
        record = ctx.deferred(lambda: framed_size(size), lambda out: write_record(out, chunks, size))
        return Encoded(ctx.index, p.source.id, (record, size, schema), p.n_frames,
                       {**prepared_signature(p), "images": schema.cameras, "points": schema.points},
                       warnings=grid_notes(p, plan.options.resample))

    def assemble(self, parts: Iterable[Encoded], out_dir: Path, plan: _Plan) -> WriteResult:
        settings = plan.settings
        result = WriteResult(warnings=list(plan.warnings))
        with staged_dir(out_dir / self.name, overwrite=plan.options.overwrite) as staging:
            root = staging / settings.name / settings.version
            root.mkdir(parents=True)
            splits = {s: _Split(root, settings.name, s, settings.shard_bytes) for s in ("train", "val")}
            schema: _Schema | None = None
            ids: dict[str, list[str]] = {s: [] for s in splits}  # per split, in order
            with ExitStack() as stack:
                for split in splits.values():
                    stack.enter_context(split.shards)
                for part in accepted(self.name, parts, result):
                    record, size, episode_schema = part.data
                    schema = schema or episode_schema
                    name = "val" if part.index in plan.val else "train"
                    splits[name].add(record, size)
                    ids[name].append(part.episode_id)
                written = {s: (split.shards.finish(), split.num_bytes) for s, split in splits.items()}
            folder = root.relative_to(staging).as_posix()
            for s, (shards, _) in written.items():
                result.episode_files.update(
                    (ep, [f"{folder}/{name}"]) for ep, name in zip(ids[s], item_shards(shards), strict=True))
            assert schema is not None
            if schema.action is None:
                result.warnings.append(f"steps have no `action`. {NO_ACTION}")
            _write_metadata(root, settings, schema, written, plan.options)
            result.files = sorted(str(p.relative_to(staging)) for p in root.iterdir())
        return result

    def check(self, format_dir: Path) -> list[str]:
        """Load with tensorflow_datasets when it is importable; always check the structure with robokit's reader."""
        from robokit.converters.rlds.check import check_dataset

        return check_dataset(format_dir)


def _write_metadata(root: Path, settings: _Settings, schema: _Schema, written: dict[str, tuple[list[Shard], int]],
                    options: WriterOptions) -> None:
    """features.json, then dataset_info.json (last: its presence marks a complete dataset)."""
    (root / FEATURES).write_text(json.dumps(schema.node(), indent=4, sort_keys=True))
    metadata = {**({"action": schema.action_meaning.to_dict()} if schema.action_meaning is not None else {}),
                **({"extras": schema.extras} if schema.extras else {})}
    if metadata:  # TFDS keeps free-form dataset metadata in metadata.json
        (root / METADATA).write_text(json.dumps(metadata, indent=4, sort_keys=True))
    splits = [split_entry(s, [sh.items for sh in shards], num_bytes)
              for s, (shards, num_bytes) in written.items() if shards]
    robot = f" Robot: {options.robot_type}." if options.robot_type else ""
    robot += f" {NO_ACTION}" if schema.action is None else ""
    info: dict[str, Any] = {
        "description": f"Robot episodes in RLDS format, written by robokit.{robot}",
        "fileFormat": FILE_FORMAT,
        "name": settings.name,
        "releaseNotes": {settings.version: "Written by robokit."},
        "splits": splits,
        "version": settings.version,
    }
    (root / DATASET_INFO).write_text(json.dumps(info, indent=4, sort_keys=True))


RLDS = RldsWriter()
