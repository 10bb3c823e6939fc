"""Extras: numeric features a source describes itself (LeRobot's `next.reward`, `observation.environment_state`,
`annotation.*`) that play no role robokit knows (state, action, pose, camera), carried to every tabular output.

A reader keeps the source's description on the stream's origin (`StreamOrigin.feature`, JSON text); `prepare`
resamples the extras with the state (`PreparedEpisode.extras`); writers store them under the source's key with its
dtype, shape and names: LeRobot as columns (the description verbatim in `meta/info.json`), RLDS as step fields,
WebDataset as sample members, MCAP as numeric topics, each with the source key and names in its metadata.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from robokit.timeline import Episode, NumericStream, Stream, StreamOrigin

_DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "bool")


def with_feature(origin: StreamOrigin, feature: Mapping[str, Any]) -> StreamOrigin:
    """`origin` carrying the source's feature description (kept verbatim, key order too)."""
    return replace(origin, feature=json.dumps(dict(feature)))


def feature_of(stream: Stream | None) -> dict[str, Any] | None:
    """The source's feature description a stream carries, else None."""
    origin = stream.origin if stream is not None else None
    if origin is None or not origin.feature:
        return None
    feature = json.loads(origin.feature)
    return feature if isinstance(feature, dict) else None


def vector_shape(feature: Mapping[str, Any]) -> int | None:
    """D of a feature of dtype numeric and shape [D], else None (other shapes are not carried as extras)."""
    shape = feature.get("shape")
    if feature.get("dtype") not in _DTYPES or not isinstance(shape, list) or len(shape) != 1:
        return None
    return shape[0] if isinstance(shape[0], int) and not isinstance(shape[0], bool) and shape[0] > 0 else None


@dataclass(frozen=True)
class Extra:
    """One extra on the output grid: its values (N, D) in the source's dtype and the source's description."""

    key: str  # the source's feature key (`next.reward`)
    channel: str  # robokit's channel (`next/reward`)
    values: np.ndarray
    feature: dict[str, Any]
    names: tuple[str, ...]  # flat dimension names (indices when the source has none)

    @property
    def dtype(self) -> str:
        return str(self.values.dtype)

    @property
    def scalar(self) -> bool:
        """A shape-[1] feature: one value per step (a scalar column, as lerobot stores it)."""
        return bool(self.feature.get("shape") == [1])

    def column(self) -> np.ndarray:
        """(N,) for a scalar feature, else (N, D)."""
        return self.values[:, 0] if self.scalar else self.values

    def describe(self) -> dict[str, Any]:
        """What other formats' metadata say of it: the source key, channel, dtype, shape and names as given."""
        return {"feature": self.key, "channel": self.channel, "dtype": self.dtype, "shape": list(self.feature["shape"]),
                "names": self.feature.get("names"), "flat_names": list(self.names)}


def extra_channels(episode: Episode, used: Iterable[str]) -> tuple[list[str], list[str]]:
    """The channels carried as extras (numeric streams with a vector feature description, not in `used`), and a
    note for each described stream that cannot be carried."""
    taken = set(used)
    channels, notes = [], []
    for name, stream in sorted(episode.streams.items()):
        feature = feature_of(stream)
        if feature is None or "dtype" not in feature or name in taken:  # no dtype: not a data feature (tasks)
            continue
        width = vector_shape(feature)
        if isinstance(stream, NumericStream) and width == stream.dim:
            channels.append(name)
        else:
            notes.append(f"feature {stream.origin.topic if stream.origin else name} (dtype {feature.get('dtype')}, "
                         f"shape {feature.get('shape')}) is not carried: only numeric vectors are")
    return channels, notes


def build_extras(streams: Mapping[str, Stream], channels: Iterable[str]) -> dict[str, Extra]:
    """The resampled extras by channel, cast back to the source's dtype (integers rounded, bools from 0/1)."""
    out: dict[str, Extra] = {}
    for name in channels:
        stream, feature = streams[name], feature_of(streams[name])
        assert isinstance(stream, NumericStream) and feature is not None and stream.origin is not None
        out[name] = Extra(stream.origin.topic, name, cast(stream.values, feature["dtype"]), feature, stream.names)
    return out


def cast(values: np.ndarray, dtype: str) -> np.ndarray:
    """Timeline values (float64) in a source dtype: integers rounded, bools from 0/1."""
    kind = np.dtype(dtype)
    if kind == np.bool_:
        return np.asarray(values >= 0.5)
    if np.issubdtype(kind, np.integer):
        return np.asarray(np.rint(values).astype(kind))
    return np.asarray(values.astype(kind))


def field_names(extras: Mapping[str, Extra], reserved: Iterable[str]) -> dict[str, Extra]:
    """A field or member name per extra for formats whose names cannot hold `.` or `/` (`next.reward` →
    `next_reward`), `extra_`-prefixed when it would clash with `reserved` or another extra."""
    taken = set(reserved)
    out: dict[str, Extra] = {}
    for extra in extras.values():
        name = extra.key.replace(".", "_").replace("/", "_")
        while name in taken:
            name = f"extra_{name}"
        taken.add(name)
        out[name] = extra
    return out


def signature(extras: Mapping[str, Extra]) -> list[tuple[str, str, list[int]]]:
    """What episodes of one dataset must share: each extra's key, dtype and shape."""
    return sorted((e.key, e.dtype, list(e.feature["shape"])) for e in extras.values())
