"""LeRobot cannot hold point clouds: each point stream is named in a warning, never dropped silently."""

from __future__ import annotations

from pathlib import Path

from robokit.export.job import export
from robokit.samples.pointbag import write_point_bag


def test_point_streams_are_named_in_warnings(tmp_path: Path) -> None:
    bag = write_point_bag(tmp_path / "bag")
    result = export([bag], ["lerobot"], tmp_path / "out", {"fps": 10}, use_cache=False)
    assert result.status == "done"
    for name in ("lidar/points", "laser/scan"):
        assert f"warning: lerobot: LeRobot cannot hold point clouds; {name} not written" in result.warnings
    assert (tmp_path / "out" / "lerobot" / "meta" / "info.json").is_file()
