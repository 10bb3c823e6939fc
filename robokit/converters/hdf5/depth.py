"""HDF5 depth datasets (robomimic `obs/<camera>_depth`) → lazy `<camera>/depth` streams with a unit.

(T, H, W[, 1]) uint16 rows are millimetres (`16UC1`); float rows are metres (`32FC1`). robosuite renders
depth as a normalized z-buffer in [0, 1] that only the simulator's near/far planes turn into metres; a
float dataset whose first frame lies within [0, 1] is read as metres with a warning saying so.
"""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np

from robokit.converters.hdf5.common import DatasetFrames
from robokit.errors import SourceError
from robokit.timeline import ImageStream, SkippedTopic, StreamOrigin


def depth_channel(user: str | None, key: str) -> str:
    """`agentview_depth` → `agentview/depth`; a user's bare name gets `/depth`."""
    if user:
        return user if "/" in user else f"{user}/depth"
    return f"{key.removesuffix('_depth').replace('/', '_')}/depth"


def depth_camera(path: Path, ds: h5py.Dataset, channel: str, times: np.ndarray,
                 warnings: list[str]) -> ImageStream | SkippedTopic:
    """A lazy depth stream over the first len(times) rows of `ds`, or why it cannot be one."""
    shape, kind = tuple(ds.shape), ds.dtype.kind
    if not (len(shape) == 3 or (len(shape) == 4 and shape[3] == 1)):
        return SkippedTopic(ds.name, f"hdf5/{ds.dtype}", f"depth of shape {shape}: expected (T, H, W[, 1])",
                            shape[0] if shape else 0)
    if ds.dtype != np.uint16 and kind != "f":
        return SkippedTopic(ds.name, f"hdf5/{ds.dtype}", f"{ds.dtype} depth has no known unit (expected uint16 "
                            "millimetres or float metres)", shape[0])
    source = DatasetFrames(path, ds.name, encoded=False)
    encoding = "16UC1" if ds.dtype == np.uint16 else "32FC1"
    if kind == "f" and len(times):
        try:
            first = np.asarray(ds[0], dtype=np.float64)
        except (OSError, ValueError) as err:
            raise SourceError(f"{path}: dataset {ds.name}: frame 0 cannot be read ({err})") from err
        finite = first[np.isfinite(first)]
        if finite.size and finite.min() >= 0 and finite.max() <= 1:
            warnings.append(f"{path}: {ds.name}: depth values within [0, 1] read as metres; robosuite's "
                            "normalized depth needs the simulator's near/far planes to become metres")
    return ImageStream(channel, times, origin=StreamOrigin(ds.name, "hdf5/depth", "grid"), source=source,
                       width=int(shape[2]), height=int(shape[1]), encoding=encoding)
