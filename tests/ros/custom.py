"""A custom message type no builder maps (`acme_msgs/msg/ArmState`), in every container: ROS 2 and ROS 1 bags,
MCAP with ros2msg, JSON and protobuf schemas. `check_arm` asserts what robokit must read from any of them.

ArmState holds a header, a fixed array (`float64[7] q`, named by the sibling `string[] name`), a variable array
(`float32[] dq`, one message one value short: left out and counted), a bool, an int, a string (an event per
change), a nested custom message, a fixed array of messages and a duration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from robokit.timeline import Episode, EventStream, NumericStream
from tests.ros.recordings import ros1_store, write_foxglove, write_mcap_ros, write_ros1, write_ros2

TYPE = "acme_msgs/msg/ArmState"
TOPIC = "/arm/state"
GRIPPER = "float64 width\nbool grasping\n"
ARM_STATE = """std_msgs/Header header
float64[7] q
float32[] dq
string[] name
bool enabled
int32 mode
string label
acme_msgs/Gripper gripper
geometry_msgs/Point[2] waypoints
builtin_interfaces/Duration age
"""
T0 = 1_700_000_000_000_000_000
STEP = 20_000_000  # 50 Hz header stamps; the log time lags them by LAG
LAG = 2_000_000
N = 6
SHORT = 3  # the message whose dq is one value short
NAMES = [f"joint{k}" for k in range(7)]


def store(ros1: bool = False) -> Any:
    """A typestore (ROS 2 latest or ROS 1 noetic) with the acme types registered."""
    ts = ros1_store() if ros1 else get_typestore(Stores.LATEST)
    ts.register(get_types_from_msg(GRIPPER, "acme_msgs/msg/Gripper") | get_types_from_msg(ARM_STATE, TYPE))
    return ts


def fields(i: int) -> dict[str, Any]:
    """Message i's values, plain (the containers' messages are built from them)."""
    return {
        "q": [0.5 * k + 0.25 * i for k in range(7)],
        "dq": [0.25 * i] * (6 if i == SHORT else 7),
        "enabled": i % 2 == 1,
        "mode": i,
        "label": "idle" if i < 3 else "moving",
        "width": 0.01 * i,
        "grasping": i >= 4,
        "waypoints": [(float(k), 1.0, 2.0 * i) for k in range(2)],
        "age": (i, 250_000_000),
    }


def ros_records(ts: Any) -> list[tuple[str, str, int, Any]]:
    """The N messages as rosbags objects of `ts`, with header stamps and lagging log times."""
    t = ts.types
    ros1 = "seq" in dict(ts.fielddefs["std_msgs/msg/Header"][1])
    out = []
    for i in range(N):
        f, ns = fields(i), T0 + i * STEP
        stamp = t["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9)
        header = t["std_msgs/msg/Header"](**({"seq": i} if ros1 else {}), stamp=stamp, frame_id="base")
        msg = t[TYPE](
            header=header, q=np.array(f["q"]), dq=np.array(f["dq"], dtype=np.float32), name=NAMES,
            enabled=f["enabled"], mode=f["mode"], label=f["label"],
            gripper=t["acme_msgs/msg/Gripper"](width=f["width"], grasping=f["grasping"]),
            waypoints=[t["geometry_msgs/msg/Point"](x=x, y=y, z=z) for x, y, z in f["waypoints"]],
            age=t["builtin_interfaces/msg/Duration"](sec=f["age"][0], nanosec=f["age"][1]),
        )
        out.append((TOPIC, TYPE, ns + LAG, msg))
    return out


def json_records() -> list[tuple[str, Any, int]]:
    """The N messages as JSON objects (Foxglove's {sec, nsec} times)."""
    out = []
    for i in range(N):
        f, ns = fields(i), T0 + i * STEP
        body = {
            "header": {"stamp": {"sec": ns // 10**9, "nsec": ns % 10**9}, "frame_id": "base"},
            "q": f["q"], "dq": f["dq"], "name": NAMES, "enabled": f["enabled"], "mode": f["mode"],
            "label": f["label"], "gripper": {"width": f["width"], "grasping": f["grasping"]},
            "waypoints": [{"x": x, "y": y, "z": z} for x, y, z in f["waypoints"]],
            "age": {"sec": f["age"][0], "nsec": f["age"][1]},
        }
        out.append((TOPIC, ("acme.ArmState", body), ns + LAG))
    return out


def protobuf_class() -> Any:
    """acme.ArmState as a protobuf message class (built from a descriptor: no generated code)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, duration_pb2, message_factory, timestamp_pb2

    t = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="acme/arm_state.proto", package="acme", syntax="proto3",
                                               dependency=["google/protobuf/timestamp.proto",
                                                           "google/protobuf/duration.proto"])

    def message(name: str, *specs: tuple[str, int, str, bool]) -> None:
        m = proto.message_type.add(name=name)
        for n, (field, kind, type_name, repeated) in enumerate(specs, 1):
            f = m.field.add(name=field, number=n, type=kind, label=t.LABEL_REPEATED if repeated else t.LABEL_OPTIONAL)
            if type_name:
                f.type_name = type_name

    message("Gripper", ("width", t.TYPE_DOUBLE, "", False), ("grasping", t.TYPE_BOOL, "", False))
    message("Point", *((axis, t.TYPE_DOUBLE, "", False) for axis in "xyz"))
    message("ArmState", ("timestamp", t.TYPE_MESSAGE, ".google.protobuf.Timestamp", False),
            ("q", t.TYPE_DOUBLE, "", True), ("dq", t.TYPE_FLOAT, "", True), ("name", t.TYPE_STRING, "", True),
            ("enabled", t.TYPE_BOOL, "", False), ("mode", t.TYPE_INT32, "", False),
            ("label", t.TYPE_STRING, "", False), ("gripper", t.TYPE_MESSAGE, ".acme.Gripper", False),
            ("waypoints", t.TYPE_MESSAGE, ".acme.Point", True),
            ("age", t.TYPE_MESSAGE, ".google.protobuf.Duration", False))
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
    pool.AddSerializedFile(duration_pb2.DESCRIPTOR.serialized_pb)
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("acme.ArmState"))


def protobuf_records() -> list[tuple[str, Any, int]]:
    """The N messages as protobuf `acme.ArmState` (the stamp in `timestamp`, as Foxglove schemas have it)."""
    cls = protobuf_class()
    out = []
    for i in range(N):
        f, ns = fields(i), T0 + i * STEP
        msg = cls(q=f["q"], dq=f["dq"], name=NAMES, enabled=f["enabled"], mode=f["mode"], label=f["label"])
        msg.timestamp.seconds, msg.timestamp.nanos = divmod(ns, 10**9)
        msg.gripper.width, msg.gripper.grasping = f["width"], f["grasping"]
        for x, y, z in f["waypoints"]:
            msg.waypoints.add(x=x, y=y, z=z)
        msg.age.seconds, msg.age.nanos = f["age"]
        out.append((TOPIC, msg, ns + LAG))
    return out


CONTAINERS = ("ros2-sqlite3", "ros2-mcap", "ros1", "mcap-ros2msg", "mcap-ros1msg", "mcap-json", "mcap-protobuf")


def write(kind: str, folder: Path) -> Path:
    """The custom recording in container `kind` (one of CONTAINERS) under `folder`; the path to open."""
    folder.mkdir(parents=True, exist_ok=True)
    if kind.startswith("ros2-"):
        return write_ros2(folder / "bag", ros_records(store()), store(), storage=kind.removeprefix("ros2-"))
    if kind == "ros1":
        return write_ros1(folder / "arm.bag", ros_records(store(ros1=True)), store(ros1=True))
    if kind in ("mcap-ros2msg", "mcap-ros1msg"):
        ros1 = kind == "mcap-ros1msg"
        return write_mcap_ros(folder / "arm.mcap", ros_records(store(ros1)), store(ros1), ros1=ros1)
    records = json_records() if kind == "mcap-json" else protobuf_records()
    return write_foxglove(folder / "arm.mcap", records)


def expected() -> dict[str, np.ndarray]:
    """The values of each numeric channel, one row per message (`arm/state/dq` without the short one)."""
    rows = [fields(i) for i in range(N)]
    return {
        "arm/state": np.array([[r["enabled"], r["mode"], r["age"][0] + r["age"][1] * 1e-9] for r in rows]),
        "arm/state/q": np.array([r["q"] for r in rows]),
        "arm/state/dq": np.array([r["dq"] for i, r in enumerate(rows) if i != SHORT]),
        "arm/state/gripper": np.array([[r["width"], r["grasping"]] for r in rows]),
        "arm/state/waypoints": np.array([[v for p in r["waypoints"] for v in p] for r in rows]),
    }


def check_arm(ep: Episode) -> None:
    """What robokit must read from the custom recording, whatever the container."""
    s = ep.streams
    want = expected()
    stamps = np.array([T0 + i * STEP for i in range(N)])
    for name, values in want.items():
        stream = s[name]
        assert isinstance(stream, NumericStream), name
        np.testing.assert_allclose(stream.values, values, err_msg=name)
        assert stream.origin is not None and stream.origin.time_source == "header", name
        np.testing.assert_array_equal(stream.timestamps, np.delete(stamps, SHORT) if name.endswith("dq") else stamps)
    assert s["arm/state"].names == ("enabled", "mode", "age")
    assert s["arm/state/q"].names == tuple(NAMES)  # the sibling string array of the same length
    assert s["arm/state/dq"].names == tuple(NAMES)
    assert s["arm/state/gripper"].names == ("width", "grasping")
    assert s["arm/state/waypoints"].names == ("x_0", "y_0", "z_0", "x_1", "y_1", "z_1")
    label = s["arm/state/label"]
    assert isinstance(label, EventStream) and label.values == ("idle", "moving")
    assert label.timestamps.tolist() == [T0, T0 + 3 * STEP]
    assert set(s) == {*want, "arm/state/label", "arm/state/name"} and not ep.skipped
    assert [(x.topic, x.messages) for x in ep.losses] == [(TOPIC, 1)]
    assert any("1 message(s) left out of arm/state/dq: not 7 values long" in w for w in ep.warnings)
