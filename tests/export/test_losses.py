"""Reader losses reach the user: export.log, export.json (per item and episode) and the convert summary."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from rosbags.rosbag2 import StoragePlugin
from rosbags.rosbag2 import Writer as Writer2

import robokit
from robokit.cli import main
from robokit.export import export
from robokit.ros.bagwriter import START_NS, header, joint_state, typestore
from tests.ros.recordings import null_topic_names

JS = "sensor_msgs/msg/JointState"


def convert(path: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], str, str]:
    """`robokit convert PATH --to mcap`: its export.json, export.log and printed summary."""
    assert main(["convert", str(path), "--to", "mcap", "--out", str(out), "--no-cache", "--workers", "1"]) == 0
    summary = capsys.readouterr().out
    return json.loads((out / "export.json").read_text()), (out / "export.log").read_text(), summary


def test_truncated_ros2_bag_reports_lost_messages(sample_bag: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    bag = shutil.copytree(sample_bag, tmp_path / "cut")
    (storage,) = bag.glob("*.mcap")
    storage.write_bytes(storage.read_bytes()[: storage.stat().st_size * 6 // 10])
    record, log, summary = convert(bag, tmp_path / "out", capsys)

    meta = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    counts = {t["topic_metadata"]["name"]: t["message_count"] for t in meta["topics_with_message_count"]}
    (ep,) = robokit.open(bag)
    (item,) = record["items"]
    (episode,) = item["episode_reports"]
    assert item["status"] == "converted" and item["complete"] is False and episode["complete"] is False
    lost = {x["topic"]: x["messages"] for x in episode["losses"] if x["topic"]}
    assert lost["/camera/front/image_raw"] == counts["/camera/front/image_raw"] - len(ep["front/rgb"]) > 0
    assert item["lost_messages"] == episode["lost_messages"] == sum(lost.values())
    assert any("ends early" in w for w in item["warnings"]) and episode["warnings"] == item["warnings"]
    assert f"episode cut is incomplete: {item['lost_messages']} message(s)" in log
    assert "metadata.yaml counts" in log and "ends early" in log
    assert f"incomplete: {item['label']} episode cut: {item['lost_messages']} message(s) lost" in summary


def test_truncated_mcap_file_is_incomplete_without_a_count(sample_bag: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    (storage,) = sample_bag.glob("*.mcap")
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(storage.read_bytes()[: storage.stat().st_size // 2])
    record, log, summary = convert(cut, tmp_path / "out", capsys)
    (item,) = record["items"]
    assert item["complete"] is False and item["lost_messages"] == 0
    assert [x["messages"] for x in item["episode_reports"][0]["losses"]] == [None]
    assert "cut.mcap: data ends early" in log and "linear scan" in log
    assert "episode cut: messages lost (count unknown)" in summary
    assert "reader warning(s) in" in summary


def joint_bag(path: Path, positions: list[float], storage: str) -> Path:
    """A ROS 2 bag of JointStates (joints a, b) with position a from `positions`, 10 ms apart."""
    ts = typestore()
    plugin = StoragePlugin.SQLITE3 if storage == "sqlite3" else StoragePlugin.MCAP
    with Writer2(path, version=9, storage_plugin=plugin) as writer:
        conn = writer.add_connection("/joint_states", JS, typestore=ts)
        for i, value in enumerate(positions):
            t = START_NS + i * 10_000_000
            msg = joint_state(ts, header(ts, t, "base"), ("a", "b"), np.array([value, 0.0]))
            writer.write(conn, t, ts.serialize_cdr(msg, JS))
    return path


def test_missing_rows_and_nan_reach_export_json(tmp_path: Path) -> None:
    positions = [np.nan if i == 3 else float(i) for i in range(20)]
    bag = joint_bag(tmp_path / "run", positions, "sqlite3")
    (db3,) = bag.glob("*.db3")
    with sqlite3.connect(db3) as db:
        db.execute("DELETE FROM messages WHERE id > 16")
    job = export([bag], ["mcap"], tmp_path / "out", {"fps": 10}, use_cache=False)
    record = json.loads((tmp_path / "out" / "export.json").read_text())
    for item in (record["items"][0], json.loads(json.dumps(job.to_dict(), default=str))["items"][0]):
        assert item["complete"] is False and item["lost_messages"] == 4
        assert "joints/position: 1 of 16 samples hold NaN or inf values" in item["warnings"]
    assert any("NaN" in w for w in record["warnings"])
    ok = export([joint_bag(tmp_path / "ok", positions[4:], "mcap")], ["mcap"], tmp_path / "ok-out", {"fps": 10},
                use_cache=False)
    assert ok.items[0].complete and ok.items[0].episode_reports[0].lost_messages == 0 and not ok.items[0].warnings


def test_cut_ros1_bag_converts_its_intact_part(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rosbags.rosbag1 import Writer as Writer1
    from rosbags.typesys import Stores, get_typestore

    ts, path = get_typestore(Stores.ROS1_NOETIC), tmp_path / "cut.bag"
    writer = Writer1(path)
    writer.chunk_threshold = 500
    with writer:
        conn = writer.add_connection("/joint_states", JS, typestore=ts)
        for i in range(100):
            t = START_NS + i * 10_000_000
            hdr = ts.types["std_msgs/msg/Header"](seq=i, stamp=ts.types["builtin_interfaces/msg/Time"](
                sec=t // 10**9, nanosec=t % 10**9), frame_id="base")
            msg = ts.types[JS](header=hdr, name=["a"], position=np.array([float(i)]), velocity=np.zeros(0),
                               effort=np.zeros(0))
            writer.write(conn, t, ts.serialize_ros1(msg, JS))
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    record, log, summary = convert(path, tmp_path / "out", capsys)
    (item,) = record["items"]
    assert item["status"] == "converted" and item["complete"] is False
    assert 0 < record["formats"]["mcap"]["frames"] < 100
    assert "cut.bag: data ends early" in log and "read by a linear scan" in log
    assert "incomplete: " in summary and "cut.bag: data ends early" in summary


def test_a_recording_with_no_readable_stream_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Skipped whole, the recording's reader warnings (here a topic lost to a damaged row) travel with the skip:
    into export.json, the summary and the exit code."""
    bag = joint_bag(tmp_path / "run", [float(i) for i in range(20)], "sqlite3")
    (db3,) = bag.glob("*.db3")
    null_topic_names(db3)
    assert main(["convert", str(bag), "--to", "mcap", "--out", str(tmp_path / "out"), "--no-cache"]) == 1
    (item,) = json.loads((tmp_path / "out" / "export.json").read_text())["items"]
    assert item["status"] == "skipped" and "no readable streams (" in item["reason"]
    assert "has no topic name; its messages are not read" in item["reason"]
    assert "has no topic name" in capsys.readouterr().err
