"""WebDataset writer: tar shards `<out>/webdataset/<name>-NNNNNN.tar`, a wids index and `dataset.json`.

By default one sample per step, key `<episode>_<step:06d>`, members `<camera>.jpg|png`, `state.npy`,
`action.npy`, one `.npy` per pose and per extra (a source feature such as LeRobot's `next.reward` →
`next_reward.npy`, in the source dtype; see converters/extras), one N×C float32 `.npy` per point stream
(robokit.converters.points) and `meta.json`; or one sample per episode (`steps.npz`, `<camera>.<step:06d>.jpg|png`,
`<points>.<step:06d>.npy`, `meta.json`). Members are written deterministically (sorted names,
mtime 0, uid/gid 0) and shards are sized by their exact tar size; an episode never spans two shards.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from robokit.converters.actions import meaning_of_channel
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
from robokit.converters.points import frame_label, grid_notes, point_key, point_streams, prepared_clouds
from robokit.converters.prepare import PreparedEpisode
from robokit.converters.registry import ExtraOption, WriteResult
from robokit.converters.shards import Shard, ShardSet, item_shards, shard_bytes
from robokit.converters.staging import staged_dir
from robokit.converters.streaming import Encoded, EpisodeContext, accepted, prepared_signature, write_streaming
from robokit.converters.vectors import pose_key, pose_names, pose_vectors
from robokit.converters.webdataset.layout import (
    DATASET_JSON,
    INDEX_KIND,
    brace_pattern,
    closing_size,
    end_archive,
    episode_key,
    index_name,
    member_size,
    npy,
    npz,
    shard_name,
    shard_prefix,
    write_member,
)
from robokit.timeline import Episode

SAMPLE_LAYOUTS = ("step", "episode")
DATASET_NAME = ExtraOption("dataset_name", str, "robokit", "Dataset name: shards are DIR/webdataset/<name>-NNNNNN.tar.",
                           check=shard_prefix)
WDS_SHARD_MB = ExtraOption("wds_shard_mb", float, 512.0, "Target WebDataset shard size in MB, tar headers counted.",
                           low=256, high=1024)
WDS_SAMPLES = ExtraOption("wds_samples", str, "step", "WebDataset samples: one per step, or one per episode.",
                          SAMPLE_LAYOUTS)
EXTRA_OPTIONS = (DATASET_NAME, WDS_SHARD_MB, WDS_SAMPLES, *IMAGE_OPTIONS)
STEP_BLOCK = 1024  # steps whose vectors are made at once: a long episode's are never whole in memory
_STEP_ARRAYS = {"timestamp_ns": "int64", "is_first": "bool", "is_last": "bool"}  # beside the vectors in steps.npz
Member = tuple[str, bytes]


@dataclass(frozen=True)
class _Schema:
    """Member names and shapes of a dataset, fixed by its first episode."""

    cameras: dict[str, tuple[str, ImageSpec]]  # channel -> (member name, spec)
    poses: dict[str, str]  # channel -> member name
    quat_order: str
    frame: str
    extras: dict[str, str]  # channel -> member name
    points: dict[str, tuple[str, tuple[str, ...], str]]  # channel -> (member name, fields, frame)

    @classmethod
    def of(cls, p: PreparedEpisode, options: WriterOptions, requested_format: str) -> _Schema:
        cameras = camera_specs(p, requested_format)
        poses = {name: pose_key(name) for name in sorted(p.poses)}
        points = {name: (point_key(name), s.fields, frame_label(s.frame_id, options.frame))
                  for name, s in point_streams(p.source).items()}
        reserved = {"state", "action", "meta", "steps", *_STEP_ARRAYS, *poses.values(),
                    *(name for name, _ in cameras.values()), *(key for key, _, _ in points.values())}
        extras = {extra.channel: name for name, extra in field_names(p.extras, reserved).items()}
        return cls(cameras, poses, options.quat_order, options.frame, extras, points)

    def clouds(self, p: PreparedEpisode) -> dict[str, list[np.ndarray]]:
        """Per point member, the step clouds (N×C float32; 0 rows where the stream has no cloud)."""
        clouds = prepared_clouds(p, self.frame)
        return {key: clouds[channel] for channel, (key, _, _) in self.points.items()}

    def vectors(self, p: PreparedEpisode, rows: slice = slice(None)) -> dict[str, np.ndarray]:
        """Arrays of steps `rows` by member name: state, action, poses (xyz + quaternion in quat_order) (T, D)
        float32; extras in their source dtype, (T,) for a shape-[1] feature."""
        out = {"state": p.state.values[rows].astype(np.float32)}
        if p.action is not None:
            out["action"] = p.action.values[rows].astype(np.float32)
        out.update(pose_vectors(p, self.quat_order, rows))
        out.update({name: p.extras[channel].column()[rows] for channel, name in self.extras.items()})
        return out

    def _arrays(self, p: PreparedEpisode) -> dict[str, dict[str, Any]]:
        """Per-step vector members: channel, dimension names, shape (and frame for poses)."""
        out: dict[str, dict[str, Any]] = {"state": {"channel": p.state.name, "names": list(p.state.names)}}
        if p.action is not None:
            out["action"] = {"channel": p.action.name, "names": list(p.action.names),
                             "meaning": meaning_of_channel(p.action.name, p.action.unit or "", p.state.name).to_dict()}
        for channel, key in self.poses.items():
            out[key] = {"channel": channel, "names": list(pose_names(self.quat_order)), "frame": self.frame}
        arrays = {k: {"type": "array", "dtype": "float32", "shape": [len(v["names"])], **v} for k, v in out.items()}
        for channel, key in self.extras.items():
            extra = p.extras[channel]
            arrays[key] = {"type": "array", **extra.describe(), "shape": [] if extra.scalar else [len(extra.names)]}
        return arrays

    def describe(self, p: PreparedEpisode, layout: str) -> dict[str, Any]:
        """The `keys` section of dataset.json."""
        keys: dict[str, Any] = {}
        suffix = ".{step:06d}" if layout == "episode" else ""
        for channel, (name, spec) in self.cameras.items():
            keys[f"{name}{suffix}.{spec.extension}"] = {
                "type": "image", "channel": channel, "format": spec.format, "dtype": spec.dtype,
                "shape": list(spec.shape)}
        for channel, (name, fields, frame) in self.points.items():
            keys[f"{name}{suffix}.npy"] = {"type": "points", "channel": channel, "names": list(fields),
                                           "dtype": "float32", "shape": ["N", len(fields)], "frame": frame}
        arrays = self._arrays(p)
        if layout == "episode":
            keys["steps.npz"] = {"type": "arrays", "arrays": {
                **{k: {**v, "shape": ["T", *v["shape"]]} for k, v in arrays.items()},
                **{k: {"dtype": dtype, "shape": ["T"]} for k, dtype in _STEP_ARRAYS.items()}}}
        else:
            keys.update({f"{k}.npy": v for k, v in arrays.items()})
        keys["meta.json"] = {"type": "json"}
        return keys


def _json(value: dict[str, Any]) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def step_samples(key: str, index: int, p: PreparedEpisode, schema: _Schema, images: dict[str, Sequence[bytes]],
                 clouds: dict[str, list[np.ndarray]]) -> Iterator[list[Member]]:
    """One sample per step: its members, sorted by name; the vectors made `STEP_BLOCK` steps at a time."""
    n = p.n_frames
    fields = trace(p)
    t0 = int(p.timestamps[0])
    for start in range(0, n, STEP_BLOCK):
        rows = slice(start, start + STEP_BLOCK)
        vectors: dict[str, np.ndarray | list[np.ndarray]] = {**schema.vectors(p, rows),
                                                              **{k: v[rows] for k, v in clouds.items()}}
        for t in range(start, min(n, start + STEP_BLOCK)):
            members = {f"{name}.{spec.extension}": images[channel][t]
                       for channel, (name, spec) in schema.cameras.items()}
            members.update({f"{name}.npy": npy(values[t - start]) for name, values in vectors.items()})
            members["meta.json"] = _json({
                "episode": key, "episode_id": p.source.id, "episode_index": index, "step": t, "num_steps": n,
                "timestamp": (int(p.timestamps[t]) - t0) / 1e9, "timestamp_ns": int(p.timestamps[t]),
                "is_first": t == 0, "is_last": t == n - 1, "task": p.task, **fields})
            yield [(f"{key}_{t:06d}.{ext}", data) for ext, data in sorted(members.items())]


def episode_sample(key: str, index: int, p: PreparedEpisode, schema: _Schema, images: dict[str, Sequence[bytes]],
                   clouds: dict[str, list[np.ndarray]]) -> list[Member]:
    """One sample for the whole episode: `steps.npz`, one image member per camera and step, one `.npy` per
    point stream and step, `meta.json`."""
    n = p.n_frames
    arrays = schema.vectors(p)
    arrays["timestamp_ns"] = p.timestamps.astype(np.int64)
    arrays["is_first"] = np.arange(n) == 0
    arrays["is_last"] = np.arange(n) == n - 1
    members = {f"{name}.{t:06d}.{spec.extension}": images[channel][t]
               for channel, (name, spec) in schema.cameras.items() for t in range(n)}
    members.update({f"{name}.{t:06d}.npy": npy(cloud) for name, steps in clouds.items()
                    for t, cloud in enumerate(steps)})
    members["steps.npz"] = npz(arrays)
    members["meta.json"] = _json({"episode": key, "episode_id": p.source.id, "episode_index": index,
                                  "num_steps": n, "fps": p.fps, "task": p.task, **trace(p)})
    return [(f"{key}.{ext}", data) for ext, data in sorted(members.items())]


@dataclass(frozen=True)
class _Plan:
    """What every episode's encoding shares: options, validated settings and each input episode's key."""

    options: WriterOptions
    prefix: str
    target: int
    layout: str
    image_format: str
    jpeg_quality: int
    keys: tuple[str, ...]  # by input index, de-duplicated in input order


class WebDatasetWriter:
    """`--to webdataset`: tar shards at `<out>/webdataset/`; `shard_mb_range` bounds the shard_mb option."""

    name = "webdataset"
    description = "WebDataset tar shards (one sample per step or per episode) with a wids index"
    holds_points = True

    def __init__(self, shard_mb_range: tuple[float, float] = (256.0, 1024.0)) -> None:
        self.shard_mb = replace(WDS_SHARD_MB, low=shard_mb_range[0], high=shard_mb_range[1])
        self.extra_options: tuple[ExtraOption[Any], ...] = tuple(
            self.shard_mb if o is WDS_SHARD_MB else o for o in EXTRA_OPTIONS)

    def write(self, episodes: Sequence[Episode], out_dir: Path, options: WriterOptions) -> WriteResult:
        return write_streaming(self, episodes, out_dir, options)

    def plan(self, episodes: Sequence[Episode], options: WriterOptions) -> _Plan:
        taken: set[str] = set()
        return _Plan(options, options.value(DATASET_NAME), shard_bytes(options.value(self.shard_mb)),
                     options.value(WDS_SAMPLES), options.value(IMAGE_FORMAT), options.value(JPEG_QUALITY),
                     tuple(episode_key(ep.id, taken) for ep in episodes))

    def encode(self, ctx: EpisodeContext, plan: _Plan) -> Encoded:
        """One episode's samples as tar members (spilled), how many samples, its fps and `keys` description."""
        p = ctx.prepared(plan.options)
        schema = _Schema.of(p, plan.options, plan.image_format)
        images = {channel: ctx.images(channel, p.cameras[channel], spec, plan.jpeg_quality)
                  for channel, (_, spec) in schema.cameras.items()}
        key = plan.keys[ctx.index]
        clouds = schema.clouds(p)

        def samples() -> Iterator[list[Member]]:  # one step's images at a time (the episode layout: all at once)
            if plan.layout == "step":
                return step_samples(key, ctx.index, p, schema, images, clouds)
            return iter([episode_sample(key, ctx.index, p, schema, images, clouds)])

        def write(out: BinaryIO) -> None:
            for sample in samples():
                for name, data in sample:
                    write_member(out, name, data)

        def size() -> int:
            return sum(member_size(len(data)) for sample in samples() for _, data in sample)

        members = ctx.deferred(size, write)
        n_samples = p.n_frames if plan.layout == "step" else 1
        return Encoded(ctx.index, p.source.id, (members, n_samples, p.fps, schema.describe(p, plan.layout)),
                       p.n_frames, {**prepared_signature(p), "images": schema.cameras, "points": schema.points},
                       warnings=grid_notes(p, plan.options.resample))

    def assemble(self, parts: Iterable[Encoded], out_dir: Path, plan: _Plan) -> WriteResult:
        result, prefix = WriteResult(), plan.prefix
        with staged_dir(out_dir / self.name, overwrite=plan.options.overwrite) as root, \
                ShardSet(root, plan.target, lambda i, n: shard_name(prefix, i), closing_size, end_archive) as shards:
            keys: dict[str, Any] | None = None  # the first accepted episode's
            samples: list[int] = []  # per shard
            fps: set[float] = set()
            ids: list[str] = []
            for part in accepted(self.name, parts, result):
                members, n_samples, episode_fps, episode_keys = part.data
                ids.append(part.episode_id)
                keys = keys or episode_keys
                fps.add(episode_fps)
                members.copy_to(shards.file_for(members.size))
                shards.added(members.size)
                samples += [0] * (shards.current_index + 1 - len(samples))
                samples[shards.current_index] += n_samples
            written = shards.finish()
            result.episode_files = {ep: [name] for ep, name in zip(ids, item_shards(written), strict=True)}
            assert keys is not None
            _write_metadata(root, prefix, plan.layout, written, samples, keys, result, fps)
            result.files = sorted(p.name for p in root.iterdir())
        return result

    def check(self, format_dir: Path) -> list[str]:
        """Tar structure, episodes and the index with tarfile; and with `webdataset` when it is importable."""
        from robokit.converters.webdataset.check import check_dataset

        return check_dataset(format_dir)


def _write_metadata(root: Path, prefix: str, layout: str, shards: list[Shard], samples: list[int],
                    keys: dict[str, Any], result: WriteResult, fps: set[float]) -> None:
    index = {"__kind__": INDEX_KIND, "wids_version": 1, "name": prefix,
             "shardlist": [{"url": s.name, "nsamples": n, "filesize": s.size}
                           for s, n in zip(shards, samples, strict=True)]}
    (root / index_name(prefix)).write_text(json.dumps(index, indent=1))
    dataset = {"format": "webdataset", "name": prefix, "samples": layout,
               "shards": brace_pattern(prefix, len(shards)), "num_shards": len(shards),
               "num_samples": sum(samples), "num_episodes": result.episodes, "num_steps": result.frames,
               "fps": fps.pop() if len(fps) == 1 else None, "index": index_name(prefix), "keys": keys}
    (root / DATASET_JSON).write_text(json.dumps(dataset, indent=2))


WEBDATASET = WebDatasetWriter()
