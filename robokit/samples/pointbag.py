"""A tiny ROS 2 bag of a lidar and a laser scanner, for tests of point clouds through every writer.

`/lidar/points` sensor_msgs/PointCloud2 (x, y, z, intensity float32 plus a uint16 `ring` robokit does not
keep; `cloud_points(i)` points in frame `lidar`, 3 + i of them, rows padded), `/scan` sensor_msgs/LaserScan
(`SCAN_RANGES` readings: one inf, one below range_min), a static `base_link → lidar` transform and a
2-joint `/joint_states`, all at 10 Hz for `FRAMES` steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from robokit.ros.bagwriter import START_NS, BagWriter, Typestore, header, joint_state, transform, typestore

FRAMES, PERIOD_NS = 6, 100_000_000
SCAN_RANGES, ANGLE_MIN, ANGLE_INCREMENT, RANGE_MIN, RANGE_MAX = 8, -0.7, 0.2, 0.1, 10.0
TOPICS = {
    "/joint_states": "sensor_msgs/msg/JointState",
    "/lidar/points": "sensor_msgs/msg/PointCloud2",
    "/scan": "sensor_msgs/msg/LaserScan",
    "/tf_static": "tf2_msgs/msg/TFMessage",
}
_FLOAT32, _UINT16 = 7, 4  # sensor_msgs/PointField datatypes
_STEP = 20  # x, y, z, intensity float32, ring uint16, 2 bytes of padding


def cloud_points(index: int) -> np.ndarray:
    """Cloud `index` as (3 + index, 4) float32: x, y, z (m), intensity."""
    n = 3 + index
    k = np.arange(n, dtype=np.float32)
    return np.stack([k + index, -k * 0.5, np.full(n, 0.25 * index), k * 10 + index], axis=1).astype(np.float32)


def scan_ranges(index: int) -> tuple[np.ndarray, np.ndarray]:
    """Scan `index`: (ranges, intensities) float32; range 2 is inf and range 5 below range_min (no reading)."""
    ranges = (1.0 + 0.5 * np.arange(SCAN_RANGES) + 0.1 * index).astype(np.float32)
    ranges[2], ranges[5] = np.inf, 0.05
    return ranges, (np.arange(SCAN_RANGES) * 3.0 + index).astype(np.float32)


def point_cloud2(ts: Typestore, hdr: Any, points: np.ndarray) -> Any:
    """A PointCloud2 of N×4 float32 x, y, z, intensity, each point with a ring number and row padding."""
    n = len(points)
    rows = np.zeros((n, _STEP), dtype=np.uint8)
    rows[:, :16] = points.astype("<f4").view(np.uint8).reshape(n, 16)
    rows[:, 16:18] = (np.arange(n) % 16).astype("<u2").view(np.uint8).reshape(n, 2)
    field = ts.types["sensor_msgs/msg/PointField"]
    fields = [field(name=name, offset=4 * i, datatype=_FLOAT32, count=1) for i, name in enumerate("xyz")]
    fields += [field(name="intensity", offset=12, datatype=_FLOAT32, count=1),
               field(name="ring", offset=16, datatype=_UINT16, count=1)]
    return ts.types["sensor_msgs/msg/PointCloud2"](
        header=hdr, height=1, width=n, fields=fields, is_bigendian=False, point_step=_STEP, row_step=_STEP * n,
        data=rows.reshape(-1), is_dense=True)


def laser_scan(ts: Typestore, hdr: Any, ranges: np.ndarray, intensities: np.ndarray) -> Any:
    return ts.types["sensor_msgs/msg/LaserScan"](
        header=hdr, angle_min=ANGLE_MIN, angle_max=ANGLE_MIN + ANGLE_INCREMENT * (len(ranges) - 1),
        angle_increment=ANGLE_INCREMENT, time_increment=0.0, scan_time=0.1, range_min=RANGE_MIN,
        range_max=RANGE_MAX, ranges=ranges, intensities=intensities)


def write_point_bag(out: Path) -> Path:
    """Write the bag to folder `out` (which must not exist); returns `out`."""
    ts = typestore()
    with BagWriter(out, ts, TOPICS) as bag:
        bag.write(START_NS, "/tf_static", ts.types["tf2_msgs/msg/TFMessage"](transforms=[
            transform(ts, START_NS, "base_link", "lidar", np.array([0.1, 0.0, 0.3]), np.array([0.0, 0, 0, 1]))]))
        for i in range(FRAMES):
            ns = START_NS + i * PERIOD_NS
            bag.write(ns, "/joint_states", joint_state(ts, header(ts, ns, ""), ("a", "b"), np.array([i, -i]) * 0.1))
            bag.write(ns, "/lidar/points", point_cloud2(ts, header(ts, ns, "lidar"), cloud_points(i)))
            bag.write(ns, "/scan", laser_scan(ts, header(ts, ns, "laser"), *scan_ranges(i)))
    return out
