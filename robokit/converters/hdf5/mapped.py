"""HDF5 files in no known layout, read through the user's mapping: `dataset path: channel`, plus `rate`.

One episode per file; each mapped dataset holds one row per step (uint8 (T, H, W, 3) arrays become cameras,
a bare name gets `/rgb`; numbers become numeric channels). The rate is the mapping's `rate` (a string, e.g.
`rate: "30"`, as mapping values are strings), else 10 Hz with a warning.
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
    grid,
    grid_warning,
    mapped_camera_channel,
    numeric,
    opened,
    unusable,
)
from robokit.digest import source_digest
from robokit.errors import OptionError, SourceError
from robokit.timeline import Episode, EpisodeMeta, Loss, Stream
from robokit.timeline.episode import LoadedWithLosses

RATE_KEY = "rate"
DEFAULT_RATE = 10.0


def mapped_datasets(f: h5py.File, mapping: Mapping[str, str]) -> dict[str, str]:
    """dataset path (as in the file, no leading slash) → channel, for the mapping entries that name a dataset."""
    return {key.strip("/"): channel for key, channel in mapping.items()
            if key != RATE_KEY and isinstance(f.get(key.strip("/")), h5py.Dataset)}


def _rate(path: Path, mapping: Mapping[str, str], warnings: list[str]) -> float:
    raw = mapping.get(RATE_KEY)
    if raw is None:
        warnings.append(f"{path}: no `rate` in the mapping; {DEFAULT_RATE:g} Hz assumed")
        return DEFAULT_RATE
    try:
        rate = float(raw)
    except ValueError:
        rate = 0.0
    if not 0 < rate <= 1e6:
        raise OptionError(f"mapping `rate: {raw}`: expected a rate in Hz above 0")
    return rate


def read(path: Path, f: h5py.File, mapping: Mapping[str, str]) -> list[Episode]:
    """One lazy episode of the mapped datasets."""
    warnings: list[str] = []
    rate = _rate(path, mapping, warnings)
    meta = EpisodeMeta(source_uri=str(path.resolve()), episode_id=path.stem, source_version=source_digest([path]),
                       source_format="hdf5")
    return [Episode(meta, loader=partial(_streams, path, mapped_datasets(f, mapping), rate, tuple(warnings)))]


def _is_camera(ds: h5py.Dataset) -> bool:
    return bool(ds.dtype == np.uint8 and ds.ndim == 4)


def _streams(path: Path, channels: Mapping[str, str], rate: float, file_warnings: tuple[str, ...]) -> LoadedWithLosses:
    warnings, losses = [*file_warnings, grid_warning(path, rate)], list[Loss]()
    with opened(path) as f:
        found = {key: f[key] for key in channels}
        for key, ds in found.items():
            if not _is_camera(ds) and (why := unusable(ds)):
                raise SourceError(f"{path}: dataset /{key} (mapped to {channels[key]!r}): {why}")
        n = Steps(path, "/").length({k: len(ds) for k, ds in found.items()}, warnings, losses)
        times = grid(n, rate)
        streams: dict[str, Stream] = {}
        for key, ds in found.items():
            if _is_camera(ds):
                name = mapped_camera_channel(channels[key], key)
                streams[name] = camera(path, ds, name, times, encoded=False)
            else:
                streams[channels[key]] = numeric(path, ds, channels[key], times)
    return streams, [], warnings, losses
