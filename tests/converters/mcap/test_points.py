"""Point clouds and laser scans into MCAP: Foxglove PointCloud / LaserScan (protobuf) or ROS 2 PointCloud2 /
LaserScan, decoded with the Foxglove schemas and mcap_ros2, values compared with what the bag recorded."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from foxglove_schemas_protobuf.LaserScan_pb2 import LaserScan
from foxglove_schemas_protobuf.PointCloud_pb2 import PointCloud
from mcap.reader import make_reader

import robokit
from robokit.converters import get_converter
from robokit.samples.pointbag import FRAMES, RANGE_MAX, RANGE_MIN, cloud_points, scan_ranges, write_point_bag
from robokit.timeline.points import PointStream

from .conftest import messages, write

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_point_bag(tmp_path_factory.mktemp("points") / "bag")


def _file(bag: Path, out: Path, **options: object) -> Path:
    return write(robokit.open(bag), out, **options) / "bag.mcap"


def _raw(path: Path, topic: str) -> list[tuple[str, bytes]]:
    """(schema name, message bytes) of one topic."""
    with path.open("rb") as f:
        return [(schema.name, m.data) for schema, _, m in make_reader(f).iter_messages(topics=[topic])]


def test_protobuf_clouds_decode_with_the_foxglove_schema(bag: Path, tmp_path: Path) -> None:
    path = _file(bag, tmp_path)
    raw = _raw(path, "/lidar/points")
    assert len(raw) == FRAMES and {name for name, _ in raw} == {"foxglove.PointCloud"}
    for i, (_, data) in enumerate(raw):
        msg = PointCloud.FromString(data)
        assert msg.frame_id == "lidar" and [f.name for f in msg.fields] == ["x", "y", "z", "intensity"]
        assert [f.offset for f in msg.fields] == [0, 4, 8, 12] and msg.point_stride == 16
        assert {f.type for f in msg.fields} == {msg.fields[0].FLOAT32} and msg.pose.orientation.w == 1
        points = np.frombuffer(msg.data, dtype="<f4").reshape(-1, 4)
        assert np.array_equal(points, cloud_points(i))
    assert get_converter("mcap").check(path.parent) == []


def test_protobuf_scans_decode_with_the_foxglove_schema(bag: Path, tmp_path: Path) -> None:
    raw = _raw(_file(bag, tmp_path), "/laser/scan")
    assert len(raw) == FRAMES and {name for name, _ in raw} == {"foxglove.LaserScan"}
    for i, (_, data) in enumerate(raw):
        msg = LaserScan.FromString(data)
        ranges, intensities = scan_ranges(i)
        valid = np.isfinite(ranges) & (ranges >= RANGE_MIN) & (ranges <= RANGE_MAX)
        got = np.asarray(msg.ranges, dtype=np.float32)
        assert np.array_equal(got[valid], ranges[valid]) and np.isnan(got[~valid]).all()  # no reading: NaN
        assert np.allclose(msg.intensities, intensities) and msg.frame_id == "laser"
        assert msg.start_angle == pytest.approx(-0.7) and msg.end_angle == pytest.approx(-0.7 + 0.2 * 7)


def test_ros2_encoding_writes_pointcloud2_and_laserscan(bag: Path, tmp_path: Path) -> None:
    path = _file(bag, tmp_path, mcap_encoding="ros2")
    clouds = messages(path, "/lidar/points")
    assert len(clouds) == FRAMES
    for i, (_, msg) in enumerate(clouds):
        assert [f.name for f in msg.fields] == ["x", "y", "z", "intensity"] and msg.width == len(cloud_points(i))
        assert np.array_equal(np.frombuffer(bytes(msg.data), "<f4").reshape(-1, 4), cloud_points(i))
    scans = messages(path, "/laser/scan")
    assert np.array_equal(np.asarray(scans[0][1].ranges, np.float32), scan_ranges(0)[0])  # as recorded
    assert scans[0][1].range_min == pytest.approx(RANGE_MIN) and scans[0][1].scan_time == pytest.approx(0.1)
    assert get_converter("mcap").check(path.parent) == []


def test_read_back_gives_the_same_points(bag: Path, tmp_path: Path) -> None:
    (ep,) = robokit.open(_file(bag, tmp_path))
    clouds, scans = ep.streams["lidar/points"], ep.streams["laser/scan"]
    assert isinstance(clouds, PointStream) and isinstance(scans, PointStream) and scans.scan
    for i, cloud in enumerate(clouds.clouds()):
        assert np.array_equal(cloud.points, cloud_points(i))
    assert scans.counts.tolist() == [6] * FRAMES


def test_world_frame_clouds_take_the_requested_axes(bag: Path, tmp_path: Path) -> None:
    """A cloud in the TF root changes axes with the root's edges (opencv: x right, y down, z forward)."""
    (ep,) = robokit.open(bag)
    lidar = ep.streams["lidar/points"]
    assert isinstance(lidar, PointStream)
    moved = ep.with_streams({"lidar/points": replace(lidar, frame_id=""),
                             "joints/position": ep.streams["joints/position"]})
    path = write([moved], tmp_path, frame="opencv") / "bag.mcap"
    msg = PointCloud.FromString(_raw(path, "/lidar/points")[0][1])
    points = np.frombuffer(msg.data, dtype="<f4").reshape(-1, 4)
    x, y, z, i = cloud_points(0).T
    assert np.allclose(points, np.stack([-y, -z, x, i], axis=1))  # FLU → RDF
    assert msg.frame_id == "world"


def test_linear_resampling_warns_that_clouds_take_the_nearest(bag: Path, tmp_path: Path) -> None:
    path = _file(bag, tmp_path, fps=5, resample="linear")
    logs = [m.message for _, m in messages(path, "/robokit/log")]
    assert any("lidar/points: point clouds are never interpolated" in text for text in logs)
