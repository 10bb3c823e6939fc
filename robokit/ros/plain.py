"""Builders for common plain message types: std_msgs scalars and arrays, Joy, joint trajectory commands,
battery, temperature, magnetic field, GNSS fixes, stamped vectors and points (ROS 1, ROS 2, MCAP alike).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from robokit.ros.fields import header_stamp, vec3
from robokit.ros.messages import JointStateBuilder
from robokit.ros.points import POINT_BUILDERS
from robokit.ros.topic_builder import Rows, TopicBuilder
from robokit.sources import naming
from robokit.timeline import Stream

_INTEGERS = ("Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64")
SCALAR_TYPES = tuple(f"std_msgs/msg/{t}" for t in ("Bool", "Byte", "Char", "Float32", "Float64", *_INTEGERS))
ARRAY_TYPES = tuple(f"std_msgs/msg/{t}MultiArray" for t in ("Byte", "Float32", "Float64", *_INTEGERS))


class _Fields(TopicBuilder):
    """One numeric channel `<name>/<field>` of fixed named values per message (NaN when a value is absent)."""

    drop: frozenset[str] = frozenset()
    default = "topic"
    field = "data"
    names: tuple[str, ...] = ()
    unit = ""

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.name = naming.topic_name(topic, self.drop, self.default)
        self.rows = Rows()

    def values(self, msg: Any) -> Sequence[float]:
        return [_number(getattr(msg, n, None)) for n in self.names]

    def add(self, msg: Any, log_time: int, position: int) -> None:
        self.rows.add(self.clock.add(header_stamp(msg), log_time), self.values(msg))

    def build(self) -> list[Stream]:
        if not len(self.rows):
            return []
        return [self.rows.stream(self, f"{self.name}/{self.field}", self.names, self.unit)]


def _number(value: Any) -> float:
    """A field as a float: bools 0/1, single bytes and chars their code, absent (None) NaN."""
    if value is None:
        return float("nan")
    if isinstance(value, bytes | str):
        return float(ord(value[:1])) if value else float("nan")
    return float(value)


class ScalarBuilder(_Fields):
    """`<name>/data` (1 dim) from std_msgs Bool, Byte, Char, Float*, Int*, UInt* messages."""

    names = ("data",)


class ArrayBuilder(TopicBuilder):
    """`<name>/data` from std_msgs *MultiArray: the width is the first message's; others padded or cut."""

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.name = naming.topic_name(topic, default="array")
        self.rows = Rows()
        self.width: int | None = None
        self.resized = 0

    def add(self, msg: Any, log_time: int, position: int) -> None:
        data = msg.data
        values = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes) else np.asarray(data)
        values = values.astype(np.float64).reshape(-1)
        if self.width is None:
            self.width = len(values)
        if len(values) != self.width:
            self.resized += 1
            values = np.concatenate([values, np.full(self.width, np.nan)])[: self.width]
        self.rows.add(self.clock.add(header_stamp(msg), log_time), values)

    def build(self) -> list[Stream]:
        if not len(self.rows) or not self.width:
            return []
        if self.resized:
            self.warnings.append(f"{self.topic}: {self.resized} message(s) not {self.width} values wide, "
                                 "padded with NaN or cut to the first message's width")
        names = tuple(f"data_{i}" for i in range(self.width))
        return [self.rows.stream(self, f"{self.name}/data", names, "")]


class JoyBuilder(TopicBuilder):
    """`<name>/axes` and `<name>/buttons` from sensor_msgs Joy; widths are the first message's."""

    multi = True

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.name = naming.topic_name(topic, frozenset({"joy"}), "joy")
        self.axes, self.buttons = Rows(), Rows()
        self.widths: tuple[int, int] | None = None

    def add(self, msg: Any, log_time: int, position: int) -> None:
        axes = np.asarray(msg.axes, dtype=np.float64).reshape(-1)
        buttons = np.asarray(msg.buttons, dtype=np.float64).reshape(-1)
        if self.widths is None:
            self.widths = (len(axes), len(buttons))
        sample = self.clock.add(header_stamp(msg), log_time)
        self.axes.add(sample, _fit(axes, self.widths[0]))
        self.buttons.add(sample, _fit(buttons, self.widths[1]))

    def build(self) -> list[Stream]:
        if self.widths is None:
            return []
        n_axes, n_buttons = self.widths
        streams: list[Stream] = []
        if n_axes:
            names = tuple(f"axis_{i}" for i in range(n_axes))
            streams.append(self.axes.stream(self, f"{self.name}/axes", names, ""))
        if n_buttons:
            names = tuple(f"button_{i}" for i in range(n_buttons))
            streams.append(self.buttons.stream(self, f"{self.name}/buttons", names, ""))
        return streams


def _fit(values: np.ndarray, width: int) -> np.ndarray:
    return np.concatenate([values, np.full(width, np.nan)])[:width]


class JointTrajectoryBuilder(JointStateBuilder):
    """`<group>/position|velocity|effort` from trajectory_msgs JointTrajectory commands: each message's
    first point (the next target), joints matched by name; messages without points are not samples."""

    def _joints(self, msg: Any) -> tuple[list[str], dict[str, np.ndarray]]:
        point = msg.points[0]
        fields = {"position": "positions", "velocity": "velocities", "effort": "effort"}
        values = {f: np.asarray(getattr(point, src, ()), dtype=np.float64).reshape(-1) for f, src in fields.items()}
        return [str(n) for n in msg.joint_names], values

    def add(self, msg: Any, log_time: int, position: int) -> None:
        if len(msg.points):
            super().add(msg, log_time, position)


class BatteryBuilder(_Fields):
    """`<name>/state`: voltage, current, charge, capacity, design capacity, percentage, temperature."""

    drop = frozenset({"battery_state"})
    default = "battery"
    field = "state"
    names = ("voltage", "current", "charge", "capacity", "design_capacity", "percentage", "temperature")
    unit = "V, A, Ah, Ah, Ah, fraction, °C"


class TemperatureBuilder(_Fields):
    """`<name>/temperature` (°C) from sensor_msgs Temperature."""

    drop = frozenset({"temperature"})
    default = "temperature"
    field = "temperature"
    names = ("temperature",)
    unit = "°C"


class _VectorBuilder(_Fields):
    """x, y, z of the message's vector field."""

    names = ("x", "y", "z")
    source = ""

    def values(self, msg: Any) -> Sequence[float]:
        return vec3(getattr(msg, self.source))


class MagneticFieldBuilder(_VectorBuilder):
    """`<name>/magnetic_field` (x, y, z in T) from sensor_msgs MagneticField."""

    drop = frozenset({"magnetic_field", "mag"})
    default = "magnetometer"
    field = "magnetic_field"
    source = "magnetic_field"
    unit = "T"


class Vector3Builder(_VectorBuilder):
    """`<name>/vector` (x, y, z) from geometry_msgs Vector3Stamped."""

    field = "vector"
    source = "vector"


class PointBuilder(_VectorBuilder):
    """`<name>/point` (x, y, z in m) from geometry_msgs PointStamped."""

    field = "point"
    source = "point"
    unit = "m"


class NavSatFixBuilder(_Fields):
    """`<name>/fix`: latitude, longitude (degrees), altitude (m) from sensor_msgs NavSatFix / Foxglove LocationFix."""

    drop = frozenset({"fix"})
    default = "gps"
    field = "fix"
    names = ("latitude", "longitude", "altitude")
    unit = "deg, deg, m"


PLAIN_BUILDERS: dict[str, type[TopicBuilder]] = {
    **dict.fromkeys(SCALAR_TYPES, ScalarBuilder),
    **dict.fromkeys(ARRAY_TYPES, ArrayBuilder),
    "sensor_msgs/msg/Joy": JoyBuilder,
    "trajectory_msgs/msg/JointTrajectory": JointTrajectoryBuilder,
    "sensor_msgs/msg/BatteryState": BatteryBuilder,
    "sensor_msgs/msg/Temperature": TemperatureBuilder,
    "sensor_msgs/msg/MagneticField": MagneticFieldBuilder,
    "sensor_msgs/msg/NavSatFix": NavSatFixBuilder,
    "foxglove.LocationFix": NavSatFixBuilder,
    "geometry_msgs/msg/Vector3Stamped": Vector3Builder,
    "geometry_msgs/msg/PointStamped": PointBuilder,
    **POINT_BUILDERS,
}
