"""A real laser scanner: `/scan` (sensor_msgs/LaserScan, a Hokuyo on a tilting mount) of PlotJuggler's tilt_laser.bag
(tests/realdata/ros/SOURCES.md), read as a point stream and converted to MCAP and WebDataset, compared with the
messages as rosbags reads them."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from foxglove_schemas_protobuf.LaserScan_pb2 import LaserScan
from mcap.reader import make_reader
from rosbags.highlevel import AnyReader

import robokit
from robokit.cli import main
from robokit.timeline.points import PointStream

BAG = Path(__file__).parent / "ros" / "plotjuggler_tilt_laser_scan.bag"
SCANS = 30


@pytest.fixture(scope="module")
def source() -> list[Any]:
    """The /scan messages as rosbags decodes them, in header-stamp order."""
    with AnyReader([BAG]) as reader:
        msgs = [reader.deserialize(raw, c.msgtype) for c, _, raw in
                reader.messages([c for c in reader.connections if c.topic == "/scan"])]
    return sorted(msgs, key=lambda m: m.header.stamp.sec * 10**9 + m.header.stamp.nanosec)


def _valid(m: Any) -> np.ndarray:
    r = np.asarray(m.ranges, dtype=np.float32)
    return np.asarray(np.isfinite(r) & (r >= m.range_min) & (r <= m.range_max))


def test_info_counts_scans_and_points(source: list[Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", "--json", str(BAG)]) == 0
    (info,) = json.loads(capsys.readouterr().out)
    row = next(s for s in info["streams"] if s["channel"] == "laser/scan")
    assert row["kind"] == "points" and row["count"] == SCANS and row["msgtype"] == "sensor_msgs/msg/LaserScan"
    counts = [int(_valid(m).sum()) for m in source]
    assert f"{min(counts)}–{max(counts)} points each, {sum(counts)} in all" in row["detail"]
    assert "(x, y, z) in frame 'laser'" in row["detail"]  # the Hokuyo records no intensities


def test_points_are_the_valid_ranges_in_the_scan_plane(source: list[Any]) -> None:
    (ep,) = robokit.open(BAG)
    stream = ep.streams["laser/scan"]
    assert isinstance(stream, PointStream) and stream.scan and len(stream) == SCANS
    for m, cloud in zip(source, stream.clouds(), strict=True):
        ok = _valid(m)
        angles = m.angle_min + m.angle_increment * np.flatnonzero(ok)
        expected = np.stack([m.ranges[ok] * np.cos(angles), m.ranges[ok] * np.sin(angles), np.zeros(ok.sum())], 1)
        assert np.allclose(cloud.points, expected, atol=1e-5)
        assert cloud.scan is not None and np.array_equal(cloud.scan.ranges, np.asarray(m.ranges, np.float32))


def test_convert_to_mcap_and_webdataset(source: list[Any], tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["convert", str(BAG), "--to", "mcap", "--to", "webdataset", "--state", "tf/laser",
                 "--out", str(out), "--no-cache", "--workers", "1", "-q"]) == 0
    assert main(["check", str(out)]) == 0
    with (out / "mcap" / "plotjuggler_tilt_laser_scan.mcap").open("rb") as f:
        scans = [LaserScan.FromString(m.data) for _, _, m in make_reader(f).iter_messages(topics=["/laser/scan"])]
    assert len(scans) == SCANS  # no --fps: MCAP keeps every scan at its own time
    for m, written in zip(source, scans, strict=True):
        ok, got = _valid(m), np.asarray(written.ranges, dtype=np.float32)
        assert np.array_equal(got[ok], np.asarray(m.ranges, np.float32)[ok]) and np.isnan(got[~ok]).all()
        assert written.frame_id == "laser" and written.start_angle == pytest.approx(m.angle_min)
    counts = {int(_valid(m).sum()) for m in source} | {0}  # 0: a step after the last scan (the state runs longer)
    with tarfile.open(next((out / "webdataset").glob("*.tar"))) as tar:
        clouds = [np.load(io.BytesIO(tar.extractfile(x).read()))  # type: ignore[union-attr]
                  for x in tar.getmembers() if x.name.endswith(".laser_scan.npy")]
    assert all(c.dtype == np.float32 and c.shape[1] == 3 and len(c) in counts for c in clouds)
    assert sum(len(c) > 0 for c in clouds) >= SCANS - 2
