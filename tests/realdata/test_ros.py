"""Real ROS 1 bags, ROS 2 bags and MCAP files written by other projects (tests/realdata/ros/SOURCES.md).

Every mapped channel is compared with the source messages read by rosbags itself; four recordings (each
kind, all robots that are not arms) go through `convert` to every episode format and `check`.
Two recordings are generated stand-ins (conftest, `ros/SOURCES.md` "Gaps"): no permissively licensed MCAP written by
rosbag2 with Odometry, nor bag with Joy, was found.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore

import robokit
from robokit.cli import main
from robokit.timeline import NumericStream, PoseStream

Row = Callable[[Any], list[float]]


def _xyz(v: Any) -> list[float]:
    return [v.x, v.y, v.z]


def _pose(p: Any) -> list[float]:
    return [*_xyz(p.position), p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w]


def _twist(m: Any) -> list[float]:
    t = m.twist if hasattr(m, "twist") else m
    return [*_xyz(t.linear), *_xyz(t.angular)]


_BATTERY = ("voltage", "current", "charge", "capacity", "design_capacity", "percentage", "temperature")

# recording → {channel: (source topic, the row robokit must give for one message)}
CHANNELS: dict[str, dict[str, tuple[str, Row]]] = {
    "inorbit_fake_sensors.bag": {
        "my_temperature/temperature": ("/my_temperature", lambda m: [m.temperature]),
        "my_magnetic_field/magnetic_field": ("/my_magnetic_field", lambda m: _xyz(m.magnetic_field)),
    },
    "inorbit_ros2_sensors": {
        "my_temperature/temperature": ("/my_temperature", lambda m: [m.temperature]),
        "my_magnetic_field/magnetic_field": ("/my_magnetic_field", lambda m: _xyz(m.magnetic_field)),
    },
    "plotjuggler_tilt_laser.bag": {
        "position_gps/fix": ("/position_gps", lambda m: [m.latitude, m.longitude, m.altitude]),
        "velocity/twist": ("/velocity", _twist),
        "gravity_vector/vector": ("/gravity_vector", lambda m: _xyz(m.vector)),
        "imu_data/angular_velocity": ("/imu_data", lambda m: _xyz(m.angular_velocity)),
        # custom xsens_mtig types, flattened by their fields (robokit/ros/generic.py)
        "temperature": ("/temperature", lambda m: [m.reading, m.min_reading, m.max_reading]),
        "info_gps": ("/info_gps", lambda m: [m.m_nb_sat, m.satellites_locked, m.valid_data]),
        "info_gps/gps": ("/info_gps", lambda m: [v for g in m.gps for v in (g.m_id, g.m_navigationStatus,
                                                                           g.m_signalQuality, g.m_signalStrength)]),
    },
    "plotjuggler_fake_joint_state.bag": {
        "fake_joints_state/position": ("/fake_joints_state", lambda m: list(m.position)),
        "fake_joints_state/effort": ("/fake_joints_state", lambda m: list(m.effort)),
    },
    "turtlesim_example.bag": {
        "turtle1_cmd_vel/twist": ("/turtle1/cmd_vel", _twist),
        "turtle2_cmd_vel/twist": ("/turtle2/cmd_vel", _twist),
        "turtle1/pose": ("/turtle1/pose", lambda m: [m.x, m.y, m.theta, m.linear_velocity, m.angular_velocity]),
        "turtle2/color_sensor": ("/turtle2/color_sensor", lambda m: [m.r, m.g, m.b]),
    },
    "robot_localization_jackal.bag": {
        "jackal_velocity_controller/pose": ("/jackal_velocity_controller/odom", lambda m: _pose(m.pose.pose)),
        "jackal_velocity_controller/twist": ("/jackal_velocity_controller/odom", lambda m: _twist(m.twist)),
        "imu/angular_velocity": ("/imu/data", lambda m: _xyz(m.angular_velocity)),
    },
    "generated_odometry_mcap": {
        "odom/pose": ("/odom", lambda m: _pose(m.pose.pose)),
        "odom/twist": ("/odom", lambda m: _twist(m.twist)),
        "amcl_pose/pose": ("/amcl_pose", lambda m: _pose(m.pose.pose)),
    },
    "generated_joy_sqlite3": {
        "joy/axes": ("/joy", lambda m: list(m.axes)),
        "joy/buttons": ("/joy", lambda m: list(m.buttons)),
    },
    "plotjuggler_rosbag2_test": {
        "battery/state": ("/battery", lambda m: [getattr(m, f, np.nan) for f in _BATTERY]),
        "pose/pose": ("/pose", lambda m: _pose(m.pose)),
        "imu/angular_velocity": ("/imu", lambda m: _xyz(m.angular_velocity)),
    },
}

# the three converted to every format: (recording, --state, --action, extra options)
CONVERTED = [
    ("plotjuggler_tilt_laser.bag", "position_gps/fix", "velocity/twist", ()),
    ("plotjuggler_rosbag2_test", "pose/pose", "imu/angular_velocity", ("--quat-order", "xyzw")),
    ("generated_odometry_mcap", None, "odom/twist", ()),  # no joints: the state defaults to the odometry pose
    ("robot_localization_jackal.bag", None, "jackal_velocity_controller/twist", ()),  # the same, a real robot
]
# the state `convert` picks by default when no --state is given: the odometry pose
DEFAULT_STATE = {"generated_odometry_mcap": "odom/pose",
                 "robot_localization_jackal.bag": "jackal_velocity_controller/pose"}
FORMATS = ("lerobot", "rlds", "webdataset", "mcap", "viam-binary")


def _source(path: Path, topic: str, row: Row, clock: str) -> tuple[np.ndarray, np.ndarray]:
    """(timestamps, rows) of a topic as rosbags reads it, on robokit's clock, in time then recorded order,
    exact repeats (same time and content) left out."""
    samples = []
    with AnyReader([path], default_typestore=get_typestore(Stores.ROS2_FOXY)) as reader:
        for conn, log_time, raw in reader.messages([c for c in reader.connections if c.topic == topic]):
            msg: Any = reader.deserialize(raw, conn.msgtype)
            stamp = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec if clock == "header" else log_time
            samples.append((stamp, tuple(float(v) for v in row(msg))))
    samples.sort(key=lambda s: s[0])  # stable: recorded order within one timestamp
    unique = [s for i, s in enumerate(samples) if s not in samples[max(0, i - 8):i]]
    return np.array([s[0] for s in unique], dtype=np.int64), np.array([s[1] for s in unique], dtype=np.float64)


@pytest.mark.parametrize("name", sorted(CHANNELS))
def test_channels_equal_the_source_messages(name: str, ros_roots: dict[str, Path]) -> None:
    path = ros_roots[name]
    (ep,) = robokit.open(path)
    for channel, (topic, row) in CHANNELS[name].items():
        stream = ep.streams[channel]
        assert stream.origin is not None and stream.origin.topic == topic
        ts, rows = _source(path, topic, row, stream.origin.time_source)
        if isinstance(stream, PoseStream):
            values = np.hstack([stream.translation, stream.quaternion])
            rows[:, 3:] /= np.linalg.norm(rows[:, 3:], axis=1, keepdims=True)  # robokit keeps unit quaternions
            np.testing.assert_allclose(values, rows, atol=1e-6, err_msg=channel)
        else:
            assert isinstance(stream, NumericStream)
            np.testing.assert_array_equal(stream.values, rows, err_msg=channel)
        np.testing.assert_array_equal(stream.timestamps, ts, err_msg=channel)
    assert not [w for w in ep.warnings if "failed to decode" in w]


def test_what_info_reports_on_real_recordings(capsys: pytest.CaptureFixture[str], ros_roots: dict[str, Path]) -> None:
    """Custom types listed as channels; exact repeats dropped and counted; sim-time stamps named."""
    names = ("plotjuggler_tilt_laser.bag", "generated_odometry_mcap", "inorbit_ros2_sensors")
    assert main(["info", "--json", *(str(ros_roots[n]) for n in names)]) == 0
    tilt, odom, ros2 = json.loads(capsys.readouterr().out)
    assert not tilt["skipped"]
    custom = {(s["channel"], s["msgtype"], s["count"]) for s in tilt["streams"] if s["msgtype"].startswith("xsens")}
    gps, thermistor = "xsens_mtig/msg/GPSInfoStatus2", "xsens_mtig/msg/Thermistor"
    assert custom == {("info_gps", gps, 61), ("info_gps/gps", gps, 61), ("temperature", thermistor, 61)}
    assert "/temperature: 60 sample(s) of temperature dropped (same timestamp and content" in " ".join(tilt["warnings"])
    assert "/velocity: 60 sample(s) of velocity/twist dropped (same timestamp and content" in " ".join(tilt["warnings"])
    assert any(w.startswith("/odom: header stamps are") and "using the log time" in w for w in odom["warnings"])
    rates = {s["channel"]: s["rate_hz"] for s in ros2["streams"]}  # header stamps all zero: the log time
    assert rates == pytest.approx({"my_temperature/temperature": 1.0, "my_magnetic_field/magnetic_field": 1.0},
                                  abs=0.02)


def test_default_state_without_joints_or_odometry_lists_the_candidates(tmp_path: Path,
                                                                       ros_roots: dict[str, Path]) -> None:
    out = tmp_path / "out"
    main(["convert", str(ros_roots["inorbit_fake_sensors.bag"]), "--to", "lerobot", "--out", str(out), "--no-cache",
          "--workers", "1"])
    report = json.loads((out / "export.json").read_text())["formats"]["lerobot"]
    assert report["status"] == "failed"
    assert "my_magnetic_field/magnetic_field, my_temperature/temperature" in report["reason"]


@pytest.mark.parametrize(("name", "state", "action", "extra"), CONVERTED)
def test_convert_every_format_and_check(tmp_path: Path, name: str, state: str | None, action: str,
                                        extra: tuple[str, ...], ros_roots: dict[str, Path]) -> None:
    out, path = tmp_path / "out", ros_roots[name]
    args = ["convert", str(path), *(a for f in FORMATS for a in ("--to", f)), "--out", str(out),
            "--no-cache", "--workers", "1", "--frame", "ros", "--action", action, *extra]
    assert main([*args, *(("--state", state) if state else ())]) == 0
    formats = json.loads((out / "export.json").read_text())["formats"]
    assert all(formats[f]["status"] == "written" for f in FORMATS), formats
    assert main(["check", str(out)]) == 0

    (ep,) = robokit.open(path)
    state = state or DEFAULT_STATE[name]
    topic, row = {**CHANNELS[name]}[state]
    source = ep.streams[state]
    assert isinstance(source, NumericStream | PoseStream) and source.origin is not None
    _, rows = _source(path, topic, row, source.origin.time_source)
    if len(rows[0]) == 7:  # unit quaternions with w >= 0, as robokit writes them
        rows[:, 3:] /= np.linalg.norm(rows[:, 3:], axis=1, keepdims=True) * np.where(rows[:, 6:] < 0, -1, 1)
    if isinstance(source, PoseStream) and "xyzw" not in extra:  # wxyz by default
        rows = rows[:, [0, 1, 2, 6, 3, 4, 5]]
    info = json.loads((out / "lerobot" / "meta" / "info.json").read_text())
    names = info["features"]["observation.state"]["names"]
    xyzw, wxyz = ["x", "y", "z", "qx", "qy", "qz", "qw"], ["x", "y", "z", "qw", "qx", "qy", "qz"]
    assert names == (list(source.names) if not isinstance(source, PoseStream) else xyzw if "xyzw" in extra else wxyz)
    data = pq.read_table(out / "lerobot" / "data" / "chunk-000" / "file-000.parquet").to_pydict()
    frames = len(data["frame_index"])
    assert frames == formats["lerobot"]["frames"] == formats["rlds"]["frames"] == formats["webdataset"]["frames"]
    assert abs(frames - ep.duration_s * info["fps"]) <= ep.duration_s * info["fps"] * 0.1 + 2
    written = np.array(data["observation.state"], dtype=np.float32)
    # nearest resampling: every written state is one of the recorded ones (float32), the first one first
    distance = np.abs(written[:, None, :] - rows[None, :, :].astype(np.float32)).max(axis=2).min(axis=1)
    assert distance.max() <= 1e-6 and np.allclose(written[0], rows[0], atol=1e-6)
    action_stream = ep.streams[action]
    assert isinstance(action_stream, NumericStream)
    assert np.array(data["action"]).shape == (frames, action_stream.dim)
