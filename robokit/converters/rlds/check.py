"""Checks a written RLDS folder: structurally with robokit's own reader, then with TFDS when it is importable."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from robokit.converters.consumers import TFDS
from robokit.converters.images import frame_layout
from robokit.converters.rlds.example import Value, decode_example
from robokit.converters.rlds.features import Leaf
from robokit.converters.rlds.reader import RldsDataset, encoded_frame, load_dataset, step_count, version_dirs
from robokit.errors import SourceError


def _record_problems(ds: RldsDataset, where: str, values: dict[str, Value]) -> list[str]:
    """Keys, step counts, flags and first/last images of one episode record."""
    problems = []
    if set(values) != set(ds.leaves):
        missing, extra = sorted(set(ds.leaves) - set(values)), sorted(set(values) - set(ds.leaves))
        problems.append(f"{where}: keys differ from features.json (missing {missing}, extra {extra})")
    n = step_count(ds.leaves, values)
    for key, leaf in ds.leaves.items():
        if leaf.sequence_rank != 1 or key not in values:
            continue
        per_step = int(np.prod(leaf.shape)) if leaf.kind == "tensor" and leaf.encoding == "none" else 1
        if len(values[key]) != n * per_step:
            problems.append(f"{where}: {key} holds {len(values[key])} values for {n} steps")
        elif leaf.kind == "image" and n:
            problems += _image_problems(where, leaf, values[key])
    first, last = values.get("steps/is_first", np.zeros(0)), values.get("steps/is_last", np.zeros(0))
    if n and (list(np.flatnonzero(first)) != [0] or list(np.flatnonzero(last)) != [n - 1]):
        problems.append(f"{where}: is_first/is_last must be set on exactly the first/last of {n} steps")
    return problems


def _image_problems(where: str, leaf: Leaf, frames: Value) -> list[str]:
    problems = []
    assert not isinstance(frames, np.ndarray)
    for i in (0, len(frames) - 1):
        pixels = encoded_frame(frames[i]).array()
        shape = pixels.shape if pixels.ndim == 3 else (*pixels.shape, 1)
        if any(d > 0 for d in leaf.shape) and tuple(shape) != leaf.shape:
            problems.append(f"{where}: {leaf.key} step {i} decodes to {tuple(shape)}, features.json says {leaf.shape}")
        elif frame_layout(encoded_frame(frames[i]))[3] != leaf.dtype:
            problems.append(f"{where}: {leaf.key} step {i} is not {leaf.dtype}")
    return problems


def structure(root: Path) -> list[str]:
    """§C of the RLDS checks: CRCs, shard names and lengths, leaf keys, step counts, images, numBytes."""
    from robokit.converters.rlds.records import iter_records

    try:
        ds = load_dataset(root)
    except SourceError as exc:
        return [str(exc)]
    problems = [f"{p.name}: left-over partial file" for p in root.glob(".*partial*")]
    if not any(ds.splits.values()):
        problems.append("dataset_info.json lists no split with shards")
    split_bytes = {s["name"]: int(s.get("numBytes", 0)) for s in ds.info.get("splits", [])}
    for split, shards in ds.splits.items():
        payload = 0
        for index, (path, expected) in enumerate(shards):
            if not path.is_file():
                problems.append(f"{split}: missing shard {path.name}")
                continue
            count = 0
            try:
                for record in iter_records(path):
                    problems += _record_problems(ds, f"{path.name} record {count}", decode_example(record))
                    payload += len(record)
                    count += 1
            except SourceError as exc:
                problems.append(str(exc))
            if count != expected:
                problems.append(f"{path.name}: {count} records, shardLengths[{index}] says {expected}")
        if payload != split_bytes.get(split, payload):
            problems.append(f"{split}: payloads total {payload} bytes, numBytes says {split_bytes[split]}")
    return problems


def with_tfds(root: Path) -> list[str]:
    """Load every split with the real TFDS (when TensorFlow and TFDS are importable) and walk every step."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if not TFDS.available():  # TFDS reads TFRecords only through TensorFlow: both must import
        return []
    import tensorflow_datasets as tfds

    problems = []
    try:
        builder = tfds.builder_from_directory(str(root))
        cameras = {k: f.shape for k, f in builder.info.features["steps"]["observation"].items()
                   if isinstance(f, tfds.features.Image)}
        for split, info in builder.info.splits.items():
            episodes = 0
            for ep in builder.as_dataset(split=split, shuffle_files=False):
                steps = list(ep["steps"].as_numpy_iterator())
                firsts = [i for i, s in enumerate(steps) if s["is_first"]]
                lasts = [i for i, s in enumerate(steps) if s["is_last"]]
                if steps and (firsts != [0] or lasts != [len(steps) - 1]):
                    problems.append(f"tfds {split} episode {episodes}: is_first/is_last not once each")
                for key, shape in cameras.items():
                    if steps and steps[0]["observation"][key].shape != shape:
                        problems.append(f"tfds {split} episode {episodes}: {key} is not {shape}")
                episodes += 1
            if episodes != info.num_examples:
                problems.append(f"tfds {split}: {episodes} episodes, dataset_info.json says {info.num_examples}")
    except Exception as exc:  # the consumer's own failure is the finding
        problems.append(f"tensorflow_datasets could not load {root}: {type(exc).__name__}: {exc}")
    return problems


def check_dataset(format_dir: Path) -> list[str]:
    """Problems found in every dataset version under `format_dir` (empty: it passed)."""
    roots = version_dirs(format_dir) if format_dir.is_dir() else []
    if not roots:
        return [f"{format_dir}: no dataset_info.json found"]
    problems = []
    for root in roots:
        found = structure(root)
        problems += [f"{root.relative_to(format_dir)}: {p}" for p in found]
        if not found:
            problems += with_tfds(root)
    return problems
