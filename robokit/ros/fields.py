"""Field access shared by every decoder's objects: type names, stamps, frames, bytes, vectors, JSON dicts."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np


class UnsupportedMessage(ValueError):
    """The topic's messages cannot be mapped (e.g. an unknown image encoding): skip the whole topic."""


def normalize_type(name: str) -> str:
    """One spelling per type: `sensor_msgs/Image` → `sensor_msgs/msg/Image`; `foxglove_msgs/msg/X` → `foxglove.X`."""
    if name.startswith("foxglove_msgs/"):
        return "foxglove." + name.rsplit("/", 1)[1]
    return ros_type(name)


def ros_type(name: str) -> str:
    """The spelling typestores register: `sensor_msgs/Image` → `sensor_msgs/msg/Image` (Foxglove's ROS types too)."""
    parts = name.split("/")
    return f"{parts[0]}/msg/{parts[1]}" if len(parts) == 2 else name


class JsonMessage:
    """Attribute access over a decoded JSON object, so JSON channels share the object mapping."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> Any:
        try:
            return wrap_json(self._data[name])
        except KeyError:
            raise AttributeError(name) from None


def message_fields(obj: Any) -> list[str] | None:
    """The field names of a decoded message (rosbags dataclass, protobuf message, JSON object); None for a value."""
    if isinstance(obj, JsonMessage):
        return list(obj._data)
    descriptor = getattr(type(obj), "DESCRIPTOR", None)
    if descriptor is not None and hasattr(descriptor, "fields"):
        return [f.name for f in descriptor.fields]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [f.name for f in dataclasses.fields(obj) if not f.name.startswith("__")]  # rosbags' __msgtype__
    return None


def wrap_json(value: Any) -> Any:
    """Dicts (nested, also inside lists) become `JsonMessage`s; other values stay as they are."""
    if isinstance(value, dict):
        return JsonMessage(value)
    if isinstance(value, list):
        return [wrap_json(v) for v in value]
    return value


def first_attr(obj: Any, *names: str, default: Any = None) -> Any:
    """The first of `names` present on `obj` (ROS 1 `K` vs ROS 2 `k`, protobuf vs ROS spellings)."""
    for name in names:
        value = getattr(obj, name, None)
        if value is not None:
            return value
    return default


_TIME_FIELDS = (("sec", "nanosec"), ("secs", "nsecs"), ("seconds", "nanos"), ("sec", "nsec"))


def time_fields(names: Sequence[str]) -> tuple[str, str] | None:
    """(seconds, nanoseconds) field names when a message with exactly the fields `names` is a time or duration."""
    return next((pair for pair in _TIME_FIELDS if set(names) == set(pair)), None)


def time_ns(stamp: Any) -> int:
    """ns of a ROS 2 / rosbags (`sec, nanosec`), mcap_ros1 (`secs, nsecs`), protobuf or Foxglove JSON time."""
    if stamp is None:
        return 0
    for sec, nsec in _TIME_FIELDS:
        s, n = getattr(stamp, sec, None), getattr(stamp, nsec, None)
        if s is not None and n is not None:
            return int(s) * 1_000_000_000 + int(n)
    return 0


def header_stamp(msg: Any) -> int:
    """The message's own time (`header.stamp`, or Foxglove `timestamp`), 0 when it has none."""
    header = getattr(msg, "header", None)
    if header is not None:
        return time_ns(getattr(header, "stamp", None))
    return time_ns(getattr(msg, "timestamp", None))


def frame_id(msg: Any) -> str:
    """The frame of a ROS message (`header.frame_id`) or a Foxglove one (`frame_id`)."""
    return str(getattr(getattr(msg, "header", msg), "frame_id", ""))


def as_bytes(data: Any) -> bytes:
    """Message byte fields as bytes: numpy views, lists, protobuf bytes, or base64 strings (JSON)."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return base64.b64decode(data)
    if isinstance(data, np.ndarray):
        return data.tobytes()
    return bytes(data)


def vec3(v: Any) -> tuple[float, float, float]:
    return (float(getattr(v, "x", 0.0)), float(getattr(v, "y", 0.0)), float(getattr(v, "z", 0.0)))


def quat(q: Any) -> tuple[float, float, float, float]:
    """A quaternion as xyzw; an unset one (None, or all zero as protobuf defaults it) is the identity."""
    xyzw = (0.0, 0.0, 0.0, 0.0) if q is None else (float(q.x), float(q.y), float(q.z), float(q.w))
    return xyzw if any(xyzw) else (0.0, 0.0, 0.0, 1.0)
