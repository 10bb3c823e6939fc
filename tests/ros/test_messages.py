"""Message objects → samples: the clock choice, joint states mapped by name, unmapped types."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from robokit.ros import topic_builder
from robokit.ros.builders import builder_for
from robokit.ros.fields import wrap_json
from robokit.ros.generic import GenericBuilder
from robokit.ros.messages import ImageBuilder
from robokit.timeline.images import ArrayFrameSource


def test_clock_choice() -> None:
    def clock(stamps: list[int], logs: list[int]) -> tuple[list[int], str]:
        c = topic_builder.Clock()
        for s, t in zip(stamps, logs, strict=True):
            c.add(s, t)
        times, source = c.resolve()
        return times.tolist(), source

    s = 10**18
    assert clock([s, s + 10], [s + 5, s + 15]) == ([s, s + 10], "header")
    assert clock([0, s + 10], [s + 5, s + 15]) == ([s + 5, s + 15], "log")  # one zero stamp
    assert clock([100, 200], [s, s + 100]) == ([s, s + 100], "log")  # sim time vs wall clock
    assert clock([], []) == ([], "log")


def test_joint_state_by_name_and_json() -> None:
    b = builder_for("/joint_states", "sensor_msgs/msg/JointState")
    assert b is not None
    msg = wrap_json
    b.add(msg({"name": ["a", "b"], "position": [1, 2], "velocity": [], "effort": []}), 10, 0)
    b.add(msg({"name": ["b", "a", "z"], "position": [4, 3, 9], "velocity": [], "effort": [1, 1, 1]}), 20, 1)
    streams = {s.name: s for s in b.build()}
    assert set(streams) == {"joints/position", "joints/effort"}
    assert streams["joints/position"].values.tolist() == [[1, 2], [3, 4]]
    assert np.isnan(streams["joints/effort"].values[0]).all() and streams["joints/effort"].values[1].tolist() == [1, 1]
    assert any("'z'" in w for w in b.warnings)


def test_numeric_rows_do_not_keep_the_messages_buffers() -> None:
    """A deserialised message's arrays are views of its whole buffer: rows copy their values, so a topic's messages
    are freed as they are read (60,000 joint states once held 100 MB this way)."""
    import sys
    from types import SimpleNamespace

    b = builder_for("/joint_states", "sensor_msgs/msg/JointState")
    assert b is not None
    buffer = np.arange(64, dtype=np.float64).tobytes()
    before = sys.getrefcount(buffer)
    for i in range(40):  # past the rows' first buffer of 16
        view = np.frombuffer(buffer, dtype=np.float64, count=2, offset=8 * i)
        msg = SimpleNamespace(header=SimpleNamespace(stamp=SimpleNamespace(sec=i + 1, nanosec=0)), name=["a", "b"],
                              position=view, velocity=view, effort=np.zeros(0))
        b.add(msg, (i + 1) * 10**9, i)
    del view, msg
    assert sys.getrefcount(buffer) == before
    streams = {s.name: s for s in b.build()}
    assert streams["joints/position"].values.tolist() == [[i, i + 1] for i in range(40)]
    assert streams["joints/velocity"].timestamps.tolist() == [(i + 1) * 10**9 for i in range(40)]


def test_type_without_a_builder_is_flattened() -> None:
    assert isinstance(builder_for("/x", "turtlesim/msg/Pose"), GenericBuilder)


def test_clock_notes_sim_time_and_stamps_near_zero() -> None:
    s = 10**18
    sim = topic_builder.Clock()
    for i in range(3):
        sim.add(100 + i, s + i)
    assert sim.resolve()[1] == "log" and "header stamps are 1e+09 s from the log time" in sim.notes("/odom")[0]
    zero = topic_builder.Clock()
    for i in range(3):
        zero.add(0, i * 10**9)
    (note,) = zero.notes("foo")
    assert note.startswith("foo: log timestamps near zero") and note.endswith("last at 2.000 s); kept as recorded")


def test_plain_types_have_builders() -> None:
    for msgtype in ("std_msgs/msg/Float64", "std_msgs/msg/UInt8MultiArray", "sensor_msgs/msg/Joy",
                    "trajectory_msgs/msg/JointTrajectory", "sensor_msgs/msg/NavSatFix", "foxglove.LocationFix"):
        assert builder_for("/x", msgtype) is not None
    b = builder_for("/bytes", "std_msgs/msg/UInt8MultiArray")
    assert b is not None
    b.add(wrap_json({"data": b"\x01\x02"}), 5, 0)
    (stream,) = b.build()
    assert stream.name == "bytes/data" and stream.values.tolist() == [[1, 2]]


def test_header_stamps_that_do_not_advance_are_not_the_clock() -> None:
    """A driver stamping every message with one time would squeeze the stream into nanoseconds."""
    c = topic_builder.Clock()
    for i in range(5):
        c.add(10**18, 10**18 + i * 10**8)
    assert c.resolve()[1] == "log"
    assert c.notes("/x") == ["/x: header stamps do not advance with the log time; using the log time"]


def test_foxglove_location_fix_is_a_fix() -> None:
    b = builder_for("/gps", "foxglove.LocationFix")
    assert b is not None
    for i in range(2):
        fix = {"timestamp": {"sec": 100 + i, "nsec": 0}, "latitude": 48.1 + i, "longitude": 11.6, "altitude": 520}
        b.add(wrap_json(fix), (100 + i) * 10**9 + 5, i)
    (stream,) = b.build()
    assert stream.name == "gps/fix" and stream.values.tolist() == [[48.1, 11.6, 520], [49.1, 11.6, 520]]
    assert stream.timestamps.tolist() == [100 * 10**9, 101 * 10**9] and stream.origin.time_source == "header"


def test_repeated_image_frames_told_apart_by_content() -> None:
    """Frames sharing a timestamp are re-read only then: the same pixels drop, other pixels stay 1 ns apart."""
    b = builder_for("/cam/image_raw", "sensor_msgs/msg/Image")
    assert isinstance(b, ImageBuilder)
    pixels = [np.full((2, 2, 3), v, np.uint8) for v in (1, 2, 2, 3, 4)]
    stamps = [10, 20, 20, 20, 30]  # frame 2 repeats frame 1; frame 3 shares their time with other pixels
    for i, (px, t) in enumerate(zip(pixels, stamps, strict=True)):
        msg = wrap_json({"header": {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": "cam"}, "height": 2, "width": 2,
                         "encoding": "rgb8", "step": 6, "data": list(px.tobytes())})
        b.add(msg, t, i)
    b.source = ArrayFrameSource(pixels)
    (stream,) = b.build()
    assert stream.timestamps.tolist() == [10, 20, 21, 30] and stream.positions.tolist() == [0, 1, 3, 4]
    assert any("1 sample(s) of camera/rgb dropped" in w for w in b.warnings), b.warnings


def test_an_image_topic_keeps_the_frames_of_its_most_common_size() -> None:
    """A camera whose first frame (or any other) has another size or encoding than the rest: those are left out as
    a warning and a loss, whichever comes first; a frame whose data is too short fails in `add` (counted there)."""
    b = builder_for("/cam/image_raw", "sensor_msgs/msg/Image")
    assert isinstance(b, ImageBuilder)

    def msg(width: int, encoding: str = "rgb8", data: int | None = None) -> Any:
        size = width * 2 * (3 if encoding == "rgb8" else 1)
        return wrap_json({"header": {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": "cam"}, "height": 2,
                          "width": width, "encoding": encoding, "step": size // 2, "data": [0] * (data or size)})

    frames = [msg(2), msg(4), msg(4), msg(4, "mono8"), msg(4), msg(2)]
    for i, m in enumerate(frames):
        b.add(m, 10 * i, i)
    with pytest.raises(ValueError, match="too short"):
        b.add(msg(4, data=5), 60, 6)
    (stream,) = b.build()
    assert (stream.width, stream.height, stream.encoding) == (4, 2, "rgb8")
    assert stream.positions.tolist() == [1, 2, 4] and stream.timestamps.tolist() == [10, 20, 40]
    assert "/cam/image_raw: 3 frame(s) of another size or encoding than the topic's other 3 (4x2 rgb8) left out " \
           "(2 at 2x2 rgb8, 1 at 4x2 mono8)" in b.warnings
    assert [(loss.topic, loss.messages) for loss in b.losses] == [("/cam/image_raw", 3)]


def test_ros_log_messages_are_one_event_line_each() -> None:
    """`/rosout` (ROS 2 rcl_interfaces, ROS 1 rosgraph_msgs levels) → `rosout/events`, `[LEVEL] node: msg` at the
    message's own stamp."""
    s = 10**18
    for msgtype, levels in (("rcl_interfaces/msg/Log", (20, 30)), ("rosgraph_msgs/msg/Log", (2, 4))):
        b = builder_for("/rosout", msgtype)
        assert b is not None
        for i, level in enumerate(levels):
            stamp = {"sec": s // 10**9 + i, "nanosec": 0}
            when = {"stamp": stamp} if msgtype.startswith("rcl") else {"header": {"stamp": stamp}}
            b.add(wrap_json({**when, "level": level, "name": "/talker", "msg": f"hello {i}"}), s + i * 10**9 + 5, i)
        (events,) = b.build()
        assert events.name == "rosout/events" and b.origin.time_source == "header", msgtype
        assert list(events.values) == ["[INFO] /talker: hello 0", "[WARN] /talker: hello 1"], msgtype
        assert events.timestamps.tolist() == [s, s + 10**9], msgtype
