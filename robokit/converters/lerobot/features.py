"""LeRobot features ↔ timeline streams: channel names, dimension names, and the feature descriptions written back
(the source's own, verbatim, when a stream was read from one and is unchanged). No pyarrow here: the writer
imports this module before its encoders start; the reader turns the columns into streams.

Features are named by whoever recorded them: `observation.state` / `state` → `joints/position`, `action` /
`actions` → `action`, every `video` or `image` feature → `<name>/rgb` whatever its key, pose features
(`x, y, z` + quaternion names) → pose streams, other vectors `observation.<a>.<b>` → `<a>/<b>`. `names` may be a
flat list, a list of lists or a dict of lists (flattened in order for the stream; kept as given in the origin).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from robokit.converters.extras import feature_of, vector_shape, with_feature
from robokit.converters.lerobot.layout import ACTION_KEYS, IMAGE_PREFIX, STATE_KEYS
from robokit.timeline import NumericStream, Stream, StreamOrigin

_QUAT_NAMES = {"qx", "qy", "qz", "qw"}
NUMERIC = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "bool")


def channel(key: str) -> str:
    if key in STATE_KEYS:
        return "joints/position"
    if key in ACTION_KEYS:
        return "action"
    parts = key.removeprefix("observation.").split(".")
    return parts[0] if len(parts) == 1 else f"{parts[0]}/{'.'.join(parts[1:])}"


def camera_channel(key: str, depth: bool) -> str:
    """`observation.images.front` → `front/rgb`, `image` → `image/rgb`, `observation.image` → `image/rgb`; a depth
    map `observation.images.front_depth` → `front/depth`."""
    name = key.removeprefix(IMAGE_PREFIX).removeprefix("observation.").replace(".", "_").replace("/", "_")
    if depth:
        return f"{name.removesuffix('_depth') or name}/depth"
    return f"{name}/rgb"


def feature_names(feature: dict[str, Any]) -> list[str]:
    """A feature's dimension names: a flat list, a list of lists or a dict of lists, flattened in order."""
    names = feature.get("names")
    if isinstance(names, dict):
        names = list(names.values())
    if not isinstance(names, list):
        return []
    flat: list[str] = []
    for item in names:
        flat.extend(str(n) for n in item) if isinstance(item, list | tuple) else flat.append(str(item))
    return flat


def quat_order(names: list[str]) -> str | None:
    """`xyzw`/`wxyz` when a feature's names are a position plus a quaternion, else None."""
    if len(names) == 7 and names[:3] == ["x", "y", "z"] and set(names[3:]) == _QUAT_NAMES:
        return "".join(n[1] for n in names[3:])
    return None


def image_size(feature: dict[str, Any]) -> tuple[int, int]:
    """(height, width) from a camera feature's `shape` [H, W, C]; (0, 0) when it does not say."""
    shape: Any = feature.get("shape")
    try:
        return int(shape[0]), int(shape[1])
    except (TypeError, ValueError, IndexError, KeyError):
        return 0, 0


def depth_reader(feature: dict[str, Any]) -> Callable[[np.ndarray], np.ndarray] | str:
    """How a depth map's frames become uint16 millimetres, or why they cannot (lerobot 0.6 quantized video)."""
    from robokit.converters.lerobot.depth import millimetres_from_info

    info = feature.get("info")
    if feature["dtype"] != "video" or not isinstance(info, dict):
        return "depth map stored as images (only lerobot's quantized depth video is read)"
    try:
        return millimetres_from_info(info)
    except ValueError as exc:
        return f"depth map: {exc}"


def is_depth(feature: dict[str, Any]) -> bool:
    info = feature.get("info") or {}
    return bool(info.get("is_depth_map") or info.get("video.is_depth_map")) if isinstance(info, dict) else False


def vector_feature(stream: NumericStream, key: str) -> dict[str, Any]:
    """The feature written for a state or action: the source's description (dtype, shape, names as given) when
    `stream` was read from feature `key` and keeps its width, else float32 with the stream's dimension names."""
    source = feature_of(stream)
    if (source is not None and stream.origin is not None and stream.origin.topic == key
            and vector_shape(source) == stream.dim and feature_names(source) in ([], list(stream.names))):
        return {k: v for k, v in source.items() if k != "info"}  # `info` says what the written action is
    return {"dtype": "float32", "shape": [stream.dim], "names": list(stream.names)}


def task_origin(tasks: dict[int, str]) -> StreamOrigin:
    """The `task` stream's origin: the source's whole task table (`{"tasks": {"<index>": text}}`), so a LeRobot
    writer keeps each task's index (columns such as GR00T's `annotation.human.validity` hold task indices)."""
    return with_feature(StreamOrigin("task_index", "lerobot/task", "log"),
                        {"tasks": {str(i): text for i, text in sorted(tasks.items())}})


def source_tasks(task: Stream | None) -> dict[str, int]:
    """Task text → index as the source's task table gives them (see `task_origin`); empty when it has none."""
    table = (feature_of(task) or {}).get("tasks")
    if not isinstance(table, dict):
        return {}
    out: dict[str, int] = {}
    for index, text in table.items():
        if isinstance(text, str) and index.isdigit():
            out.setdefault(text, int(index))
    return out
