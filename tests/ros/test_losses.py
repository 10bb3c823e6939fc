"""Losses the readers report: damaged chunks (MCAP CRC, ROS 1 chunk size), shortfalls against the container's
own counts (MCAP Statistics, rosbag2 metadata.yaml, ROS 1 index), truncation, and NaN/inf values."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
from mcap.writer import CompressionType, Writer
from rosbags.rosbag1 import Writer as Writer1

JS = "sensor_msgs/msg/JointState"


def joint_records(bags: Any, m: Any, n: int) -> list[tuple[str, str, int, Any]]:
    """`n` JointStates on /joint_states, 10 ms apart, position = [i, -i]."""
    return [("/joint_states", JS, bags.T0 + i * 10 * bags.MS,
             m.joint_state(bags.T0 + i * 10 * bags.MS, ("a", "b"), [float(i), -float(i)])) for i in range(n)]


def test_mcap_crc_mismatch_skips_the_chunk_and_reads_the_rest(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    store, path = ros2_msgs.ts, tmp_path / "crc.mcap"
    payloads = [bytes(store.serialize_cdr(msg, JS)) for *_, msg in joint_records(bags, ros2_msgs, 30)]
    with path.open("wb") as f:  # uncompressed chunks: a flipped value byte still decodes, only the CRC tells
        writer = Writer(f, chunk_size=400, compression=CompressionType.NONE)
        writer.start(profile="ros2", library="robokit-tests")
        text = store.generate_msgdef(JS, ros_version=2)[0]
        channel = writer.register_channel("/joint_states", "cdr", writer.register_schema(JS, "ros2msg", text.encode()))
        for i, data in enumerate(payloads):
            writer.add_message(channel, log_time=bags.T0 + i * 10 * bags.MS, data=data, publish_time=0)
        writer.finish()
    data = bytearray(path.read_bytes())
    at = data.find(payloads[12]) + payloads[12].find(np.float64(-12.0).tobytes())
    data[at + 7] ^= 0x40  # the exponent byte of position b = -12.0
    path.write_bytes(bytes(data))

    ep = bags.open_one(path)
    pos = ep["joints/position"]
    warning = next(w for w in ep.warnings if "damaged chunk at byte" in w)
    assert "crc.mcap" in warning and "CRC" in warning
    assert 12 not in pos.values[:, 0] and pos.values[-1, 0] == 29  # the damaged chunk is gone, later ones read
    (loss,) = [x for x in ep.losses if x.topic == "/joint_states"]
    assert loss.messages == 30 - len(pos) and not ep.complete
    unchecked = bags.open_one(path, verify=False)["joints/position"]
    assert len(unchecked) == 30 and unchecked.values[12, 1] != -12  # without the check the damage goes unnoticed


def test_ros1_damaged_chunk_is_skipped(tmp_path: Path, bags: Any, ros1_msgs: Any) -> None:
    path = tmp_path / "run.bag"
    writer = Writer1(path)
    writer.set_compression(Writer1.CompressionFormat.BZ2)
    writer.chunk_threshold = 600
    with writer:
        conn = writer.add_connection("/joint_states", JS, typestore=ros1_msgs.ts)
        for _, msgtype, log_ns, msg in joint_records(bags, ros1_msgs, 40):
            writer.write(conn, log_ns, ros1_msgs.ts.serialize_ros1(msg, msgtype))
    data = bytearray(path.read_bytes())
    at = data.find(b"BZh", len(data) // 3)  # a bzip2 stream in the middle of the bag
    data[at + 20 : at + 28] = b"\x00" * 8
    path.write_bytes(bytes(data))

    ep = bags.open_one(path)
    pos = ep["joints/position"]
    assert any("damaged chunk at byte" in w and "run.bag" in w for w in ep.warnings), ep.warnings
    assert 0 < len(pos) < 40 and pos.values[-1, 0] == 39
    shortfall = [x for x in ep.losses if x.topic == "/joint_states"]
    assert [x.messages for x in shortfall] == [40 - len(pos)] and "index" in shortfall[0].reason


def test_rosbag2_sqlite3_rows_missing_against_metadata(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    bag = bags.write_ros2(tmp_path / "run", joint_records(bags, ros2_msgs, 20), ros2_msgs.ts, "sqlite3")
    (db3,) = bag.glob("*.db3")
    with sqlite3.connect(db3) as db:
        db.execute("DELETE FROM messages WHERE id % 4 = 0")
    ep = bags.open_one(bag)
    assert len(ep["joints/position"]) == 15
    (loss,) = ep.losses
    assert (loss.topic, loss.messages) == ("/joint_states", 5) and "metadata.yaml" in loss.reason
    assert any("read 15 of the 20 messages metadata.yaml counts" in w for w in ep.warnings)


def test_truncated_rosbag2_mcap_counts_its_losses(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    bag = bags.write_ros2(tmp_path / "run", joint_records(bags, ros2_msgs, 200), ros2_msgs.ts, "mcap")
    (storage,) = bag.glob("*.mcap")
    storage.write_bytes(storage.read_bytes()[: storage.stat().st_size // 2])
    ep = bags.open_one(bag)  # all messages sat in the one chunk that was cut
    assert not ep.streams and not ep.complete
    assert any("ends early" in w for w in ep.warnings)
    assert [x.messages for x in ep.losses if x.topic == "/joint_states"] == [200]


def test_non_finite_values_are_counted_per_channel(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    records = joint_records(bags, ros2_msgs, 6)
    for i, value in ((1, np.nan), (4, np.inf)):
        t = bags.T0 + i * 10 * bags.MS
        records[i] = ("/joint_states", JS, t, ros2_msgs.joint_state(t, ("a", "b"), [value, 0.0]))
    ep = bags.open_one(bags.write_ros2(tmp_path / "run", records, ros2_msgs.ts, "mcap"))
    assert "joints/position: 2 of 6 samples hold NaN or inf values" in ep.warnings
    assert ep.complete  # the values are there, only not finite


def test_cut_ros1_bag_keeps_its_intact_chunks(tmp_path: Path, bags: Any, ros1_msgs: Any) -> None:
    records = sorted(bags.scenario(ros1_msgs), key=lambda r: r[2])
    path = tmp_path / "cut.bag"
    writer = Writer1(path)
    writer.chunk_threshold = 300
    with writer:
        conns: dict[str, Any] = {}
        for topic, msgtype, log_ns, msg in records:
            if topic not in conns:
                conns[topic] = writer.add_connection(topic, msgtype, typestore=ros1_msgs.ts)
            writer.write(conns[topic], log_ns, ros1_msgs.ts.serialize_ros1(msg, msgtype))
    path.write_bytes(path.read_bytes()[: path.stat().st_size * 7 // 10])
    ep = bags.open_one(path)
    assert any("read by a linear scan" in w for w in ep.warnings) and any("ends early" in w for w in ep.warnings)
    assert not ep.complete and ep.losses[0].messages is None
    front = ep["front/rgb"]
    assert len(front) > 0 and all(np.array_equal(f.array(), bags.front_pixels(i)) for i, f in enumerate(front.frames()))


def test_a_mapped_topic_whose_schema_is_damaged_is_a_loss(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    path = bags.write_mcap_ros(tmp_path / "run.mcap", joint_records(bags, ros2_msgs, 5), ros2_msgs.ts)
    data = path.read_bytes()
    path.write_bytes(data.replace(b"float64[] position", b"float64[] pos!tion", 1))  # the schema no longer parses
    ep = bags.open_one(path, verify=False)  # (verified, the summary fails its CRC and the chunks' copy is used)
    assert not ep.streams and [(x.topic, x.messages) for x in ep.losses] == [("/joint_states", 5)]


def test_mcap_summary_failing_its_crc_is_not_trusted(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    path = bags.write_mcap_ros(tmp_path / "run.mcap", joint_records(bags, ros2_msgs, 5), ros2_msgs.ts)
    data = path.read_bytes()
    at = data.rindex(b"sensor_msgs/msg/JointState")  # the summary's copy of the schema
    path.write_bytes(data[:at] + b"sensor_msgs/msg/JointStatf" + data[at + 26 :])
    ep = bags.open_one(path)
    assert any("summary section fails its CRC" in w for w in ep.warnings)
    assert len(ep["joints/position"]) == 5 and ep.complete  # read from the chunks' own (checked) copies
    assert "joints/position" not in bags.open_one(path, verify=False).streams  # trusted, the type is unknown


def test_a_log_time_past_int64_loses_that_message_only(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    """A damaged log time beyond int64 (MCAP stores uint64) is a loss of its message, not of the recording."""
    records = joint_records(bags, ros2_msgs, 5)
    records[-1] = (*records[-1][:2], 2**64 - 1, records[-1][3])
    ep = bags.open_one(bags.write_mcap_ros(tmp_path / "run.mcap", records, ros2_msgs.ts))
    assert len(ep["joints/position"]) == 4 and not ep.complete
    assert any("OverflowError" in w for w in ep.warnings), ep.warnings
