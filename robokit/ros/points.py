"""Point cloud and laser scan messages → lazy point streams (ROS 1, ROS 2, MCAP ros1msg/ros2msg/protobuf alike).

`sensor_msgs/PointCloud2` and `foxglove.PointCloud` become `<name>/points`, `sensor_msgs/LaserScan` and
`foxglove.LaserScan` `<name>/scan`. The index pass keeps per message only its time, position, point count
and a checksum; points are decoded when a writer iterates the stream (robokit.timeline.points).
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from robokit.ros.fields import UnsupportedMessage, as_bytes, frame_id, header_stamp, quat, vec3
from robokit.ros.topic_builder import TopicBuilder
from robokit.sources import naming
from robokit.timeline import Stream
from robokit.timeline.points import XYZ, XYZI, Cloud, PointSource, PointStream, Scan

CLOUD_TYPES = ("sensor_msgs/msg/PointCloud2", "foxglove.PointCloud")
SCAN_TYPES = ("sensor_msgs/msg/LaserScan", "foxglove.LaserScan")
_DROP = frozenset({"points", "point_cloud", "pointcloud", "cloud", "scan", "laser_scan"})
# PointField datatypes (ROS) and PackedElementField types (Foxglove) → numpy element types
_ROS_TYPES = {1: "i1", 2: "u1", 3: "i2", 4: "u2", 5: "i4", 6: "u4", 7: "f4", 8: "f8"}
_FOXGLOVE_TYPES = {1: "u1", 2: "i1", 3: "u2", 4: "i2", 5: "u4", 6: "i4", 7: "f4", 8: "f8"}


def point_channel(topic: str, scan: bool) -> str:
    """`/lidar/points` → `lidar/points`, `/scan` → `laser/scan`: the default channel of a point topic."""
    if scan:
        return f"{naming.topic_name(topic, _DROP, 'laser')}/scan"
    return f"{naming.topic_name(topic, _DROP, 'lidar')}/points"


def _layout(msg: Any, msgtype: str) -> tuple[dict[str, tuple[int, str]], int, int, int, str]:
    """({field: (offset, numpy type)}, point step, points per row, rows, byte order) of a cloud message."""
    if msgtype == "foxglove.PointCloud":
        types, stride = _FOXGLOVE_TYPES, int(msg.point_stride)
        rows, width, order = 1, _data_size(msg) // stride if stride > 0 else 0, "<"
    else:
        types, stride = _ROS_TYPES, int(msg.point_step)
        rows, width, order = int(msg.height), int(msg.width), ">" if int(msg.is_bigendian or 0) else "<"
    if stride <= 0:
        raise UnsupportedMessage(f"point step {stride}: not a point cloud")
    fields = {}
    for f in msg.fields:
        kind, offset = int(f.type if msgtype == "foxglove.PointCloud" else f.datatype), int(f.offset)
        if kind in types and 0 <= offset <= stride - np.dtype(types[kind]).itemsize:  # inside the point
            fields[str(f.name)] = (offset, types[kind])
    return fields, stride, width, rows, order


def _data_size(msg: Any) -> int:
    data = msg.data
    return int(data.size) if isinstance(data, np.ndarray) else len(as_bytes(data))


def _row_step(msg: Any, msgtype: str, stride: int, width: int, rows: int) -> int:
    """The bytes per row of a cloud; ValueError when the data is too short for its rows."""
    row = width * stride
    row_step = row if msgtype == "foxglove.PointCloud" else int(msg.row_step) or row
    if width < 0 or rows < 0 or row_step < row or _data_size(msg) < rows * row_step:
        raise ValueError(f"point data of {_data_size(msg)} bytes is too short for {rows}x{width} points of "
                         f"{stride} bytes (row step {row_step})")
    return row_step


def cloud_fields(msg: Any, msgtype: str) -> tuple[tuple[str, ...], list[str]]:
    """The fields robokit keeps (x, y, z[, intensity]) and the others a cloud message has."""
    if msgtype in SCAN_TYPES:
        ranges, intensities = _scan_arrays(msg)
        return (XYZI if len(intensities) == len(ranges) and len(ranges) else XYZ), []
    fields = _layout(msg, msgtype)[0]
    if not set(XYZ) <= set(fields):
        raise UnsupportedMessage(f"point cloud without x, y, z fields (has {', '.join(fields) or 'none'})")
    return (XYZI if "intensity" in fields else XYZ), [f for f in fields if f not in XYZI]


def point_count(msg: Any, msgtype: str) -> int:
    """Points of one message without decoding them (a scan's valid readings)."""
    if msgtype in SCAN_TYPES:
        return int(_scan(msg, msgtype).valid().sum())
    _, stride, width, rows, _ = _layout(msg, msgtype)
    _row_step(msg, msgtype, stride, width, rows)
    return width * rows


def _scan_arrays(msg: Any) -> tuple[np.ndarray, np.ndarray]:
    ranges = np.asarray(msg.ranges, dtype=np.float32).reshape(-1)
    return ranges, np.asarray(msg.intensities, dtype=np.float32).reshape(-1)


def _scan(msg: Any, msgtype: str) -> Scan:
    ranges, intensities = _scan_arrays(msg)
    if msgtype == "foxglove.LaserScan":  # no increment or limits: spread start..end, every finite value a reading
        start, end = float(msg.start_angle), float(msg.end_angle)
        step = (end - start) / (len(ranges) - 1) if len(ranges) > 1 else 0.0
        return Scan(start, step, 0.0, float("inf"), ranges, intensities)
    return Scan(float(msg.angle_min), float(msg.angle_increment), float(msg.range_min), float(msg.range_max),
                ranges, intensities, float(msg.time_increment), float(msg.scan_time))


def cloud_of(msg: Any, msgtype: str, fields: tuple[str, ...]) -> Cloud:
    """One message's points as a Cloud with columns `fields` (a field the message lacks is NaN)."""
    if msgtype in SCAN_TYPES:
        cloud = Cloud.of_scan(_scan(msg, msgtype))
        return Cloud(_columns(cloud.points, cloud.fields, fields), fields, cloud.scan)
    layout, stride, width, rows, order = _layout(msg, msgtype)
    row_step = _row_step(msg, msgtype, stride, width, rows)
    data = np.frombuffer(as_bytes(msg.data), dtype=np.uint8)
    data = data[: rows * row_step].reshape(rows, row_step)[:, : width * stride].reshape(-1)
    columns = []
    for name in fields:
        if name not in layout:
            columns.append(np.full(width * rows, np.nan, dtype=np.float32))
            continue
        offset, kind = layout[name]
        dtype = np.dtype({"names": [name], "formats": [order + kind], "offsets": [offset], "itemsize": stride})
        columns.append(np.frombuffer(data, dtype=dtype)[name].astype(np.float32))
    points = np.stack(columns, axis=1) if columns else np.zeros((0, len(fields)), np.float32)
    pose = getattr(msg, "pose", None) if msgtype == "foxglove.PointCloud" else None
    return Cloud(points if pose is None else _posed(points, pose), fields)


def _posed(points: np.ndarray, pose: Any) -> np.ndarray:
    """Foxglove cloud points (relative to the message's pose) in its frame_id."""
    from scipy.spatial.transform import Rotation  # slow to import (~0.25 s): loaded for rotation work only
    q, t = quat(getattr(pose, "orientation", None)), vec3(getattr(pose, "position", None))
    if (q == (0.0, 0.0, 0.0, 1.0) and t == (0.0, 0.0, 0.0)) or not len(points):
        return points
    out = points.copy()
    out[:, :3] = Rotation.from_quat(q).apply(points[:, :3].astype(np.float64)) + np.asarray(t)
    return out


def _columns(points: np.ndarray, have: tuple[str, ...], want: tuple[str, ...]) -> np.ndarray:
    """`points` (columns `have`) with the columns `want`, NaN where absent."""
    out = np.full((len(points), len(want)), np.nan, dtype=np.float32)
    for i, name in enumerate(want):
        if name in have:
            out[:, i] = points[:, have.index(name)]
    return out


class PointsBuilder(TopicBuilder):
    """`<name>/points` (clouds) or `<name>/scan` (laser scans): per-message times, positions and point counts."""

    lazy_frames = True

    def __init__(self, topic: str, msgtype: str) -> None:
        super().__init__(topic, msgtype)
        self.scan = msgtype in SCAN_TYPES
        self.positions: list[int] = []
        self.counts: list[int] = []
        self.digests: list[int] = []
        self.fields: tuple[str, ...] | None = None
        self.dropped: list[str] = []
        self.frame_id = ""
        self.source: PointSource | None = None

    def add(self, msg: Any, log_time: int, position: int) -> None:
        fields, dropped = cloud_fields(msg, self.msgtype) if self.fields is None else (self.fields, self.dropped)
        count = point_count(msg, self.msgtype)
        if self.scan:
            digest = zlib.crc32(np.concatenate(_scan_arrays(msg)).tobytes())
        else:
            data = msg.data
            digest = zlib.crc32(np.ascontiguousarray(data).data if isinstance(data, np.ndarray) else as_bytes(data))
        if self.fields is None:
            self.fields, self.dropped, self.frame_id = fields, dropped, frame_id(msg)
        self.digests.append(digest)
        self.positions.append(position)
        self.counts.append(count)
        self.clock.add(header_stamp(msg), log_time)

    def build(self) -> list[Stream]:
        if self.fields is None:
            return []
        name = point_channel(self.topic, self.scan)
        if self.dropped:
            self.warnings.append(f"{self.topic}: point fields {', '.join(self.dropped)} not kept "
                                 f"(robokit keeps {', '.join(self.fields)})")
        ts, keep = self.ordered(name, range(len(self.positions)), self.digests.__getitem__)
        return [PointStream(name, ts, source=self.source, positions=np.asarray(self.positions, np.int64)[keep],
                            counts=np.asarray(self.counts, np.int64)[keep], fields=self.fields,
                            frame_id=naming.frame_name(self.frame_id), scan=self.scan, origin=self.origin)]


POINT_BUILDERS: dict[str, type[TopicBuilder]] = dict.fromkeys(CLOUD_TYPES + SCAN_TYPES, PointsBuilder)
