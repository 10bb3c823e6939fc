"""Derived channels computed on demand from a base channel: `<channel>_delta` and `<channel>_velocity`.

`_delta` is the next row minus the current one, 0 for the last row (the action there is "hold");
`_velocity` is np.gradient over the timestamps in seconds (central differences, one-sided at the ends),
unit `<unit>/s`. Numeric streams keep their dimension names; pose streams give their translation (x, y, z
in m). Compute them after resampling, so the steps are the grid's. Suffixes chain (`_velocity_velocity`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from robokit.timeline.streams import NumericStream, PoseStream, Stream

if TYPE_CHECKING:
    from robokit.timeline.episode import Episode

Floats = npt.NDArray[np.float64]


def _delta(values: Floats, timestamps: npt.NDArray[np.int64]) -> Floats:
    """Next minus current row; the last row is 0 (hold)."""
    out = np.zeros_like(values)
    out[:-1] = values[1:] - values[:-1]
    return out


def _velocity(values: Floats, timestamps: npt.NDArray[np.int64]) -> Floats:
    """Rate of change per second along the rows; 0 for a single sample."""
    if len(values) < 2:
        return np.zeros_like(values)
    return np.asarray(np.gradient(values, (timestamps - timestamps[0]) / 1e9, axis=0), dtype=np.float64)


_DERIVED: dict[str, tuple[Callable[[Floats, npt.NDArray[np.int64]], Floats], str]] = {
    "_delta": (_delta, ""),
    "_velocity": (_velocity, "/s"),
}


def base_channel(name: str, recorded: Mapping[str, Stream] | None = None) -> str:
    """The recorded channel a derived one comes from (`joints/position_delta` → `joints/position`).

    A name in `recorded` is its own base (`imu/angular_velocity` is recorded, not derived)."""
    if recorded is not None and name in recorded:
        return name
    for suffix in _DERIVED:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _translation(pose: PoseStream) -> NumericStream:
    """A pose stream's translation as a numeric stream (x, y, z in m)."""
    return NumericStream(pose.name, pose.timestamps, pose.translation, ("x", "y", "z"), "m", origin=pose.origin)


def derive(episode: Episode, name: str) -> Stream | None:
    """The derived channel `name` of `episode`, or None when its base channel is missing or not numeric/pose."""
    for suffix, (fn, per) in _DERIVED.items():
        if not name.endswith(suffix):
            continue
        base_name = name.removesuffix(suffix)
        base = episode.streams.get(base_name)
        if base is None:
            base = derive(episode, base_name)
        if isinstance(base, PoseStream):
            base = _translation(base)
        if isinstance(base, NumericStream):
            unit = f"{base.unit or '1'}{per}" if per else base.unit
            values = fn(base.values, base.timestamps)
            return NumericStream(name, base.timestamps, values, base.names, unit, origin=base.origin)
    return None
