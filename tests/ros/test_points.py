"""PointCloud2, foxglove.PointCloud, LaserScan and foxglove.LaserScan → lazy point streams, in every container."""

from __future__ import annotations

import base64
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from foxglove_schemas_protobuf.LaserScan_pb2 import LaserScan
from foxglove_schemas_protobuf.PackedElementField_pb2 import PackedElementField
from foxglove_schemas_protobuf.PointCloud_pb2 import PointCloud

import robokit
from robokit.samples.pointbag import FRAMES, cloud_points, write_point_bag
from robokit.timeline.points import XYZ, XYZI, PointStream

MS = 1_000_000


def _cloud2(m: Any, ns: int, points: np.ndarray, big: bool = False, rows: int = 1) -> Any:
    """A PointCloud2 of N×4 x, y, z (float64) and intensity (uint8), `rows` rows each padded by 3 bytes."""
    order = ">" if big else "<"
    dtype = np.dtype({"names": ["x", "y", "z", "i"], "formats": [order + "f8"] * 3 + ["u1"],
                      "offsets": [0, 8, 16, 24], "itemsize": 28})
    packed = np.zeros(len(points), dtype=dtype)
    for k, name in enumerate("xyzi"):
        packed[name] = points[:, k]
    width = len(points) // rows
    raw = np.frombuffer(packed.tobytes(), np.uint8).reshape(rows, width * 28)
    data = np.concatenate([raw, np.full((rows, 3), 0xEE, np.uint8)], axis=1).reshape(-1)
    field = "sensor_msgs/msg/PointField"
    fields = [m.make(field, name=n, offset=8 * k, datatype=8, count=1) for k, n in enumerate("xyz")]
    fields.append(m.make(field, name="intensity", offset=24, datatype=2, count=1))
    return m.make("sensor_msgs/msg/PointCloud2", header=m.header(ns, "/velodyne"), height=rows, width=width,
                  fields=fields, is_bigendian=big, point_step=28, row_step=width * 28 + 3, data=data, is_dense=True)


def _points(i: int) -> np.ndarray:
    k = np.arange(4.0)
    return np.stack([k + i, k * -2, k * 0.5, k * 10 + i], axis=1)


def _scan(m: Any, ns: int, ranges: list[float]) -> Any:
    return m.make("sensor_msgs/msg/LaserScan", header=m.header(ns, "laser"), angle_min=0.0, angle_max=math.pi,
                  angle_increment=math.pi / 2, range_min=0.5, range_max=5.0,
                  ranges=np.asarray(ranges, np.float32), intensities=np.zeros(0, np.float32))


def _records(m: Any, big: bool) -> list[tuple[str, str, int, Any]]:
    t0 = 1_700_000_000 * 10**9
    out = []
    for i in range(3):
        ns = t0 + i * 100 * MS
        out.append(("/velodyne_points", "sensor_msgs/msg/PointCloud2", ns, _cloud2(m, ns, _points(i), big, 2)))
        out.append(("/base_scan", "sensor_msgs/msg/LaserScan", ns, _scan(m, ns, [1.0, 2.0, float("inf"), 0.1])))
    return out


def _check(ep: robokit.Episode) -> None:
    clouds = ep.streams["velodyne_points/points"]
    assert isinstance(clouds, PointStream) and clouds.fields == XYZI and clouds.frame_id == "velodyne"
    assert clouds.counts.tolist() == [4, 4, 4] and not clouds.scan
    for i, cloud in enumerate(clouds.clouds([2, 0, 1])):  # out of order: seeks back
        assert np.array_equal(cloud.points, _points([2, 0, 1][i]).astype(np.float32))
    scan = ep.streams["base_scan/scan"]
    assert isinstance(scan, PointStream) and scan.scan and scan.fields == XYZ and scan.counts.tolist() == [2, 2, 2]
    cloud = next(scan.clouds())
    assert np.allclose(cloud.points, [[1, 0, 0], [0, 2, 0]], atol=1e-6)  # inf and below range_min: no reading
    assert cloud.scan is not None and cloud.scan.ranges.tolist()[:2] == [1.0, 2.0]


@pytest.mark.parametrize("big", [False, True])
def test_ros1_bag(tmp_path: Path, bags: Any, ros1_msgs: Any, big: bool) -> None:
    _check(bags.open_one(bags.write_ros1(tmp_path / "run.bag", _records(ros1_msgs, big), ros1_msgs.ts)))


def test_ros2_sqlite_bag(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    _check(bags.open_one(bags.write_ros2(tmp_path / "bag", _records(ros2_msgs, False), ros2_msgs.ts, "sqlite3")))


@pytest.mark.parametrize("ros1", [False, True])
def test_mcap_ros_schemas(tmp_path: Path, bags: Any, ros1_msgs: Any, ros2_msgs: Any, ros1: bool) -> None:
    m = ros1_msgs if ros1 else ros2_msgs
    _check(bags.open_one(bags.write_mcap_ros(tmp_path / "run.mcap", _records(m, False), m.ts, ros1)))


def test_foxglove_point_cloud_and_laser_scan(tmp_path: Path, bags: Any) -> None:
    """Protobuf and JSON channels; a cloud's pose places its points in frame_id."""
    t0 = 1_700_000_000 * 10**9
    cloud = PointCloud(frame_id="lidar", point_stride=16, data=np.array([[1, 2, 3, 9], [4, 5, 6, 8]], "<f4").tobytes())
    for k, name in enumerate(("x", "y", "z", "intensity")):
        cloud.fields.add(name=name, offset=4 * k, type=PackedElementField.FLOAT32)
    cloud.pose.position.x = 10.0
    cloud.pose.orientation.z, cloud.pose.orientation.w = math.sin(math.pi / 4), math.cos(math.pi / 4)  # 90° yaw
    scan = LaserScan(frame_id="laser", start_angle=0.0, end_angle=math.pi / 2, ranges=[1.0, float("nan"), 3.0],
                     intensities=[5.0, 6.0, 7.0])
    plain = {"frame_id": "lidar", "point_stride": 12, "data": base64.b64encode(np.ones(6, "<f4").tobytes()).decode(),
             "fields": [{"name": n, "offset": 4 * k, "type": 7} for k, n in enumerate("xyz")]}
    ep = bags.open_one(bags.write_foxglove(tmp_path / "f.mcap", [
        ("/lidar", cloud, t0), ("/scan", scan, t0), ("/json/cloud", ("foxglove.PointCloud", plain), t0)]))
    points = next(ep.streams["lidar/points"].clouds()).points
    assert np.allclose(points, [[8, 1, 3, 9], [5, 4, 6, 8]], atol=1e-5)
    scanned = next(ep.streams["laser/scan"].clouds())
    assert np.allclose(scanned.points, [[1, 0, 0, 5], [0, 3, 0, 7]], atol=1e-6)
    assert np.array_equal(next(ep.streams["json/points"].clouds()).points, np.ones((2, 3), np.float32))


def test_cloud_without_xyz_is_skipped_with_its_reason(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    m = ros2_msgs
    bad = m.make("sensor_msgs/msg/PointCloud2", header=m.header(1), height=1, width=1, point_step=4, row_step=4,
                 fields=[m.make("sensor_msgs/msg/PointField", name="rgb", offset=0, datatype=7, count=1)],
                 data=np.zeros(4, np.uint8))
    ep = bags.open_one(bags.write_ros2(tmp_path / "bag", [("/rgb", "sensor_msgs/msg/PointCloud2", 1, bad)], m.ts))
    assert not ep.streams and "point cloud without x, y, z fields" in ep.skipped[0].reason


def test_sample_bag_info_lists_fields_and_counts(tmp_path: Path) -> None:
    (ep,) = robokit.open(write_point_bag(tmp_path / "bag"))
    rows = {s.channel: s for s in ep.info().streams}
    assert rows["lidar/points"].kind == "points" and rows["lidar/points"].count == FRAMES
    assert "(x, y, z, intensity)" in rows["lidar/points"].detail and "3–8 points each" in rows["lidar/points"].detail
    assert "laser scans" in rows["laser/scan"].detail
    assert any("point fields ring not kept" in w for w in ep.warnings)
    stream = ep.streams["lidar/points"]
    assert isinstance(stream, PointStream)
    assert np.array_equal(next(stream.clouds([5])).points, cloud_points(5))


def test_hostile_clouds_fail_per_message_with_a_reason(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    """A cloud claiming more points than its data holds is a failed message; fields outside the point are absent."""
    m, t0 = ros2_msgs, 1_700_000_000 * 10**9
    good = _cloud2(m, t0, _points(0))
    liar = _cloud2(m, t0 + 100 * MS, _points(1))
    liar.width = 10**9
    odd = _cloud2(m, t0 + 200 * MS, _points(2))
    odd.fields[3].offset = 28  # a uint8 intensity past the end of the 28-byte point: not a field of it
    records = [("/c", "sensor_msgs/msg/PointCloud2", msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec, msg)
               for msg in (good, liar, odd)]
    ep = bags.open_one(bags.write_ros2(tmp_path / "bag", records, m.ts))
    stream = ep.streams["c/points"]
    assert isinstance(stream, PointStream) and stream.counts.tolist() == [4, 4]
    assert any("1 of 3 messages failed to decode (ValueError: point data of" in w for w in ep.warnings)
    last = list(stream.clouds())[1].points
    assert np.isnan(last[:, 3]).all() and np.array_equal(last[:, :3], _points(2)[:, :3].astype(np.float32))
