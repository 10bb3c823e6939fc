"""ROS bag readers: ROS 1 bags and ROS 2 sqlite3 bags (directory or .db3), via rosbags."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin
from rosbags.rosbag2 import Writer as Writer2

import robokit
from robokit.errors import SourceError
from tests.ros.recordings import null_topic_names


def test_ros2_sqlite3_directory(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    bag = bags.write_ros2(tmp_path / "run", bags.scenario(ros2_msgs), ros2_msgs.ts, "sqlite3")
    ep = bags.open_one(bag)
    assert (ep.id, ep.meta.source_format, ep.meta.source_uri) == ("run", "rosbag2-sqlite3", str(bag.resolve()))
    bags.check_scenario(ep)


def test_bare_db3_file(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    bag = bags.write_ros2(tmp_path / "run", bags.scenario(ros2_msgs), ros2_msgs.ts, "sqlite3")
    (db3,) = bag.glob("*.db3")
    ep = bags.open_one(db3)
    assert (ep.id, ep.meta.source_format) == (db3.stem, "rosbag2-sqlite3")
    bags.check_scenario(ep)
    front = ep["front/rgb"]
    order = [2, 0, 1, 1]
    assert all(np.array_equal(f.array(), bags.front_pixels(i)) for f, i in zip(front.frames(order), order, strict=True))


def test_ros1_bag(tmp_path: Path, bags: Any, ros1_msgs: Any) -> None:
    path = bags.write_ros1(tmp_path / "run.bag", bags.scenario(ros1_msgs, "tf/msg/tfMessage"), ros1_msgs.ts)
    ep = bags.open_one(path)
    assert (ep.id, ep.meta.source_format) == ("run", "rosbag1")
    assert ep["tf/base"].origin is not None and ep["tf/base"].origin.msgtype == "tf/msg/tfMessage"
    bags.check_scenario(ep)
    wrist = ep["wrist/rgb"]
    assert [f.data for f in wrist.frames([1, 0])] == bags.WRIST_JPEG[::-1]


def test_db3_without_definitions_uses_standard_types(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    bag = bags.write_ros2(tmp_path / "run", bags.scenario(ros2_msgs), ros2_msgs.ts, "sqlite3")
    (db3,) = bag.glob("*.db3")
    with sqlite3.connect(db3) as db:
        db.execute("DELETE FROM message_definitions")
    bags.check_scenario(bags.open_one(bag))


def test_message_compressed_bag(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    path = tmp_path / "zstd"
    store = ros2_msgs.ts
    writer = Writer2(path, version=9, storage_plugin=StoragePlugin.SQLITE3)
    writer.set_compression(CompressionMode.MESSAGE, CompressionFormat.ZSTD)
    with writer:
        conns: dict[str, Any] = {}
        for topic, msgtype, log_ns, msg in bags.scenario(ros2_msgs):
            if topic not in conns:
                conns[topic] = writer.add_connection(topic, msgtype, typestore=store)
            writer.write(conns[topic], log_ns, store.serialize_cdr(msg, msgtype))
    bags.check_scenario(bags.open_one(path))


def test_undecodable_messages_are_counted(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    bag = bags.write_ros2(tmp_path / "run", bags.scenario(ros2_msgs), ros2_msgs.ts, "sqlite3")
    (db3,) = bag.glob("*.db3")
    with sqlite3.connect(db3) as db:
        (topic_id,) = db.execute("SELECT id FROM topics WHERE name = '/cmd_vel'").fetchone()
        (first,) = db.execute("SELECT MIN(id) FROM messages WHERE topic_id = ?", (topic_id,)).fetchone()
        db.execute("UPDATE messages SET data = x'000100000000' WHERE id = ?", (first,))
    ep = bags.open_one(bag)
    assert len(ep["cmd_vel/twist"]) == 2
    (skip,) = [s for s in ep.skipped if s.topic == "/cmd_vel"]
    assert skip.count == 1 and "1 of 3 messages failed to decode" in skip.reason


def test_connection_without_a_topic_name_is_a_loss(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    """A damaged database row holding a NULL topic name: that connection's messages are a loss, the rest read."""
    bag = bags.write_ros2(tmp_path / "run", bags.scenario(ros2_msgs), ros2_msgs.ts, "sqlite3")
    (db3,) = bag.glob("*.db3")
    null_topic_names(db3, "name = '/cmd_vel'")
    (ep,) = robokit.open(db3)
    assert "cmd_vel/twist" not in ep.streams and "joints/position" in ep.streams
    (loss,) = [loss for loss in ep.losses if "has no topic name" in loss.reason]
    assert loss.messages == 3


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("x.bag", b"#ROSBAG V2.0\nshort", "not a readable ROS 1 bag"),
        ("x.db3", b"SQLite format 3\x00" + b"\x00" * 84, "not a readable ROS 2 sqlite3"),
        ("x.bag", b"#ROSBAG V1.2\n" + b"\x00" * 64, "not a recording robokit can read"),
    ],
)
def test_not_a_bag(tmp_path: Path, name: str, content: bytes, match: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(SourceError, match=match) as err:
        robokit.open(path)
    assert str(path) in str(err.value)


def test_sqlite_database_that_is_not_a_bag(tmp_path: Path) -> None:
    path = tmp_path / "other.db3"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE things (id INTEGER)")
    with pytest.raises(SourceError, match="not a readable ROS 2 sqlite3 storage file"):
        robokit.open(path)


def test_truncated_ros1_bag(tmp_path: Path, bags: Any, ros1_msgs: Any) -> None:
    path = bags.write_ros1(tmp_path / "run.bag", bags.scenario(ros1_msgs)[:5], ros1_msgs.ts)
    path.write_bytes(path.read_bytes()[:-200])  # the index is cut: the chunks are scanned
    ep = bags.open_one(path)
    assert len(ep["joints/position"]) == 5 and any("read by a linear scan" in w for w in ep.warnings)


def test_ros1_rescans_share_one_parsed_index(tmp_path: Path, bags: Any, ros1_msgs: Any,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Every segment and format rescans a camera: the bag's index is parsed once, threads read on handles of
    their own, and a changed file is parsed again."""
    from concurrent.futures import ThreadPoolExecutor

    from robokit.converters.rosbag import ros1index

    path = bags.write_ros1(tmp_path / "run.bag", bags.scenario(ros1_msgs, "tf/msg/tfMessage"), ros1_msgs.ts)
    parsed: list[Path] = []
    real = ros1index._parse
    monkeypatch.setattr(ros1index, "_parse", lambda p: parsed.append(p) or real(p))
    ep = bags.open_one(path)
    front = ep["front/rgb"]
    order = [2, 0, 1, 1, 2]
    expected = [bags.front_pixels(i) for i in order]
    with ThreadPoolExecutor(4) as pool:
        frames = list(pool.map(lambda i: front.frame(i).array(), order * 4))
    assert all(np.array_equal(f, e) for f, e in zip(frames, expected * 4, strict=True))
    assert len(parsed) == 1
    path.write_bytes(path.read_bytes())  # same bytes, new ctime: parsed again, never a stale index
    assert np.array_equal(front.frame(1).array(), bags.front_pixels(1)) and len(parsed) == 2
