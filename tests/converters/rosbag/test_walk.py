"""ROS 1 bags: uncompressed chunks read in place (frame headers only in the index pass) read exactly as chunks
read whole, on the reader scenario (padded, big-endian and bgr images, JPEG, duplicates) and on damaged copies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from robokit.converters.rosbag import reader
from tests.ros.walking import damaged_copy, walked_and_whole


@pytest.fixture(scope="module")
def scenario_bag(tmp_path_factory: pytest.TempPathFactory, bags: Any, ros1_msgs: Any) -> Path:
    out = tmp_path_factory.mktemp("ros1-walk") / "scenario.bag"
    return bags.write_ros1(out, bags.scenario(ros1_msgs), ros1_msgs.ts, chunk_bytes=4096)


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, int]:
    return walked_and_whole(path, monkeypatch, reader, "_ros1_window")


def test_the_scenario_reads_alike_in_place_or_whole(scenario_bag: Path, monkeypatch: pytest.MonkeyPatch,
                                                     bags: Any) -> None:
    walk, whole, walked = _both(scenario_bag, monkeypatch)
    assert walked > 3 and walk == whole and isinstance(walk, list)
    monkeypatch.setattr(reader.heads, "WALK_ABOVE", 0)
    bags.check_scenario(bags.open_one(scenario_bag))  # what every container must read back


def test_frames_after_the_first_come_as_heads_in_the_index_pass(scenario_bag: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[type] = []
    original = reader.headed

    def spy(parse: Any, decode: Any, raw: Any) -> Any:
        seen.append(type(raw))
        return original(parse, decode, raw)

    monkeypatch.setattr(reader, "headed", spy)
    monkeypatch.setattr(reader.heads, "WALK_ABOVE", 0)
    walk, whole, _ = walked_and_whole(scenario_bag, monkeypatch, reader, "_ros1_window")
    assert walk == whole and reader.Head in seen and bytes in seen


@pytest.mark.parametrize("seed", range(24))
def test_damaged_bags_read_alike_in_place_or_whole(seed: int, scenario_bag: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    walk, whole, _ = _both(damaged_copy(scenario_bag, tmp_path / "damaged.bag", seed), monkeypatch)
    assert walk == whole
