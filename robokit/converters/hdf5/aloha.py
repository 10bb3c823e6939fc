"""ALOHA / ACT episode files (`episode_N.hdf5`): `/observations/{qpos, qvel, effort, images/<cam>}`, `/action`.

One episode per file, 50 Hz (ALOHA's control rate; the files store none). Images are raw (T, H, W, 3) uint8
or, with `compress=True`, JPEG bytes zero-padded to a common row length: the padding is cut from each row
itself, because `/compress_len` has one row per camera in recording order, which HDF5 does not keep
(groups list their members alphabetically).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path

import h5py
import numpy as np

from robokit.converters.hdf5.common import (
    Steps,
    camera,
    datasets,
    grid,
    grid_warning,
    mapped_camera_channel,
    numeric,
    opened,
    unusable,
)
from robokit.digest import source_digest
from robokit.sources.naming import lookup
from robokit.timeline import Episode, EpisodeMeta, Loss, SkippedTopic, Stream
from robokit.timeline.episode import LoadedWithLosses

DEFAULT_RATE = 50.0
_ARM = ("waist", "shoulder", "elbow", "forearm_roll", "wrist_angle", "wrist_rotate", "gripper")
JOINT_NAMES = tuple(f"{side}_{j}" for side in ("left", "right") for j in _ARM)  # bimanual ALOHA, 14 values
_CHANNELS = {"observations/qpos": "joints/position", "observations/qvel": "joints/velocity",
             "observations/effort": "joints/effort", "action": "action"}
_STRUCTURAL = ("compress_len",)


def matches(f: h5py.File) -> bool:
    obs = f.get("observations")
    return isinstance(obs, h5py.Group) and isinstance(obs.get("qpos"), h5py.Dataset)


def read(path: Path, f: h5py.File, mapping: Mapping[str, str]) -> list[Episode]:
    """One lazy episode for the file; root attributes (`sim`, `compress`) become tags."""
    tags = {k: str(_scalar(f.attrs[k])).lower() for k in ("sim", "compress") if k in f.attrs}
    meta = EpisodeMeta(source_uri=str(path.resolve()), episode_id=path.stem, source_version=source_digest([path]),
                       source_format="aloha", robot_type="aloha", tags=tags)
    return [Episode(meta, loader=partial(_streams, path, dict(mapping)))]


def _scalar(value: object) -> object:
    array = np.asarray(value)
    return array.reshape(-1)[0].item() if array.size == 1 else value


def _streams(path: Path, mapping: Mapping[str, str]) -> LoadedWithLosses:
    warnings, losses, skipped = [grid_warning(path, DEFAULT_RATE)], list[Loss](), list[SkippedTopic]()
    with opened(path) as f:
        usable: dict[str, h5py.Dataset] = {}
        for rel, ds in datasets(f):
            if rel in _STRUCTURAL:
                continue
            image = rel.startswith("observations/images/")
            if ds.ndim == 0:
                skipped.append(SkippedTopic(ds.name, f"hdf5/{ds.dtype}", "a scalar, not one value per step", 1))
            elif image and ("depth" in rel.rsplit("/", 1)[-1] or ds.dtype != np.uint8):
                skipped.append(SkippedTopic(ds.name, f"hdf5/{ds.dtype}", f"{ds.dtype} images (depth?): depth images "
                                            "are not read yet", len(ds)))
            elif not image and (why := unusable(ds)):
                skipped.append(SkippedTopic(ds.name, f"hdf5/{ds.dtype}", why, len(ds)))
            else:
                usable[rel] = ds
        n = Steps(path, "/").length({k: len(ds) for k, ds in usable.items()}, warnings, losses)
        times = grid(n, DEFAULT_RATE)
        streams: dict[str, Stream] = {}
        for rel, ds in usable.items():
            user = lookup(mapping, rel)
            if rel.startswith("observations/images/"):
                name = mapped_camera_channel(user, rel.removeprefix("observations/images/").replace("/", "_"))
                streams[name] = camera(path, ds, name, times, encoded=ds.ndim == 2)
            else:
                name = user or _CHANNELS.get(rel) or rel.replace("observations/", "obs/", 1)
                streams[name] = numeric(path, ds, name, times, JOINT_NAMES if rel in _CHANNELS else ())
    return streams, skipped, warnings, losses
