"""Checks a written WebDataset folder with tarfile (structure, episodes, index) and `webdataset` when importable."""

from __future__ import annotations

import json
import re
import tarfile
from collections import Counter
from pathlib import Path
from typing import Any

from robokit.converters.consumers import WEBDATASET
from robokit.converters.webdataset.layout import DATASET_JSON, INDEX_KIND

_SHARD = re.compile(r"-\d{6}\.tar$")


def _samples(path: Path, problems: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """(key, meta.json) of every sample of one shard, noting members that break the WebDataset rules."""
    out: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    current = None
    with tarfile.open(path) as tar:
        for member in tar:
            if not member.isreg() or member.pax_headers or member.mtime != 0:
                problems.append(f"{path.name}: {member.name} is not a plain regular member with mtime 0")
            key, _, ext = member.name.partition(".")
            if key != current:
                if key in seen:
                    problems.append(f"{path.name}: members of sample {key} are not contiguous")
                seen.add(key)
                current = key
                out.append((key, {}))
            if ext == "meta.json":
                f = tar.extractfile(member)
                out[-1] = (key, json.loads(f.read()) if f else {})
    return out


def _episode_problems(samples: list[tuple[str, dict[str, Any]]], layout: str, shard: str) -> list[str]:
    """Per-step layout: every episode's steps 0..T-1 in order, in one shard, flagged first/last."""
    if layout != "step":
        return [f"{shard}: sample {k} has no meta.json" for k, m in samples if "num_steps" not in m]
    problems = []
    steps: dict[str, list[int]] = {}
    for key, meta in samples:
        if f"{meta.get('episode')}_{meta.get('step', -1):06d}" != key:
            problems.append(f"{shard}: sample {key} has meta.json of episode {meta.get('episode')} step "
                            f"{meta.get('step')}")
            continue
        steps.setdefault(meta["episode"], []).append(meta["step"])
        if meta["is_first"] != (meta["step"] == 0) or meta["is_last"] != (meta["step"] == meta["num_steps"] - 1):
            problems.append(f"{shard}: sample {key} has wrong is_first/is_last")
    for episode, found in steps.items():
        n = next(m["num_steps"] for k, m in samples if m.get("episode") == episode)
        if found != list(range(n)):
            problems.append(f"{shard}: episode {episode} holds steps {found[:3]}... of {n} (split or out of order)")
    return problems


def _with_webdataset(root: Path, dataset: dict[str, Any], keys: list[str]) -> list[str]:
    if not WEBDATASET.available():
        return []
    import webdataset as wds

    try:
        pattern = str(root / dataset["shards"])
        seen = [s["__key__"] for s in wds.WebDataset(pattern, shardshuffle=False, empty_check=True)]
    except Exception as exc:  # the consumer's own failure is the finding
        return [f"webdataset could not read {dataset['shards']}: {type(exc).__name__}: {exc}"]
    return [] if seen == keys else [f"webdataset yields {len(seen)} samples, the shards hold {len(keys)}"]


def check_dataset(root: Path) -> list[str]:
    """Problems found in the WebDataset folder `root` (empty: it passed)."""
    try:
        dataset = json.loads((root / DATASET_JSON).read_text())
        index = json.loads((root / dataset["index"]).read_text())
    except (OSError, ValueError, KeyError) as exc:
        return [f"{root}: no readable {DATASET_JSON} and shard index ({exc})"]
    problems = [f"{p.name}: left-over partial file" for p in root.glob(".*partial*")]
    if index.get("__kind__") != INDEX_KIND or index.get("wids_version") != 1:
        problems.append(f"{dataset['index']}: not a {INDEX_KIND} (wids_version 1) index")
    if not index.get("shardlist"):
        problems.append(f"{dataset['index']}: lists no shards")
    keys: list[str] = []
    for entry in index.get("shardlist", []):
        path = root / entry["url"]
        if not _SHARD.search(path.name) or not path.is_file():
            problems.append(f"{entry['url']}: missing or not named <name>-NNNNNN.tar")
            continue
        samples = _samples(path, problems)
        if len(samples) != entry["nsamples"] or path.stat().st_size != entry["filesize"]:
            problems.append(f"{path.name}: {len(samples)} samples of {path.stat().st_size} bytes, the index says "
                            f"{entry['nsamples']} of {entry['filesize']}")
        problems += _episode_problems(samples, dataset["samples"], path.name)
        keys += [k for k, _ in samples]
    duplicates = [k for k, n in Counter(keys).items() if n > 1]
    if duplicates:
        problems.append(f"sample keys repeat across shards: {duplicates[:5]}")
    if len(keys) != dataset.get("num_samples"):
        problems.append(f"{len(keys)} samples, {DATASET_JSON} says {dataset.get('num_samples')}")
    return problems or _with_webdataset(root, dataset, keys)
