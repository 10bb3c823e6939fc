"""Image headers read from a prefix agree with rosbags' full decode on sound and on damaged messages."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from rosbags.typesys import Stores, get_typestore

from robokit.ros.heads import HEAD_BYTES, image_head, image_whole

STORES = {False: get_typestore(Stores.LATEST), True: get_typestore(Stores.ROS1_NOETIC)}


def _message(msgtype: str, rng: random.Random, ros1: bool = False) -> bytes:
    T = STORES[ros1].types
    stamp = T["builtin_interfaces/msg/Time"](rng.randrange(-2**31, 2**31), rng.randrange(2**32))
    frame_id = "cam" * rng.randrange(0, 40)
    header = T["std_msgs/msg/Header"](rng.randrange(2**32), stamp, frame_id) if ros1 else \
        T["std_msgs/msg/Header"](stamp, frame_id)
    data = np.frombuffer(rng.randbytes(rng.randrange(0, 3000)), dtype=np.uint8)
    if msgtype == "sensor_msgs/msg/Image":
        msg: Any = T[msgtype](header, rng.randrange(500), rng.randrange(500), "rgb8"[:rng.randrange(5)],
                              rng.randrange(2), rng.randrange(4000), data)
    else:
        msg = T[msgtype](header, "jpeg"[:rng.randrange(5)], data)
    if ros1:
        return bytes(STORES[ros1].serialize_ros1(msg, msgtype))
    return bytes(STORES[ros1].serialize_cdr(msg, msgtype))


def _damaged(raw: bytes, rng: random.Random) -> bytes:
    b = bytearray(raw)
    for _ in range(rng.randrange(1, 4)):
        what = rng.randrange(4)
        if what == 0 and b:  # a byte in the header region
            b[rng.randrange(min(len(b), 80))] = rng.randrange(256)
        elif what == 1 and b:  # truncation
            del b[rng.randrange(len(b)):]
        elif what == 2:  # bytes appended
            b += rng.randbytes(rng.randrange(1, 9))
        elif len(b) > 4:  # a length field's high byte (fields are 4-aligned after the encapsulation header)
            b[min(rng.randrange(min(len(b), 80)) | 3, len(b) - 1)] = rng.randrange(256)
    return bytes(b)


def _full(raw: bytes, msgtype: str, ros1: bool = False) -> tuple[int, int, str] | None:
    try:
        msg: Any = STORES[ros1].deserialize_ros1(raw, msgtype) if ros1 else STORES[ros1].deserialize_cdr(raw, msgtype)
    except Exception:
        return None
    return msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id


@pytest.mark.parametrize("ros1", [False, True])
@pytest.mark.parametrize("msgtype", ["sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage"])
def test_a_head_is_read_only_when_the_full_decode_succeeds_alike(msgtype: str, ros1: bool) -> None:
    parse = image_head(msgtype, ros1)
    assert parse is not None
    rng = random.Random(7)
    agreed = fell_back = 0
    for case in range(3000):
        raw = _message(msgtype, rng, ros1)
        if case % 4:
            raw = _damaged(raw, rng)
        full = _full(raw, msgtype, ros1)
        head = parse(raw[:HEAD_BYTES], len(raw))
        if head is None:
            fell_back += 1
            assert case % 4 or len(raw) > HEAD_BYTES, "a sound message with a short header must parse"
            continue
        assert full == (head.header.stamp.sec, head.header.stamp.nanosec, head.header.frame_id), case
        agreed += 1
    assert agreed > 1000 and fell_back > 200


@pytest.mark.parametrize("ros1", [False, True])
@pytest.mark.parametrize("msgtype", ["sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage"])
def test_a_whole_image_reads_as_rosbags_decodes_it(msgtype: str, ros1: bool) -> None:
    """Every field equal to rosbags' on sound messages; on damaged ones, read only when rosbags reads them alike
    (None sends the message to rosbags, which says what is wrong)."""
    whole = image_whole(msgtype, ros1)
    assert whole is not None
    store, rng = STORES[ros1], random.Random(11)
    read = fell_back = 0
    for case in range(3000):
        raw = _message(msgtype, rng, ros1)
        if case % 4:
            raw = _damaged(raw, rng)
        ours = whole(raw)
        if ours is None:
            assert case % 4, "a sound message must be read"
            fell_back += 1
            continue
        theirs: Any = store.deserialize_ros1(raw, msgtype) if ros1 else store.deserialize_cdr(raw, msgtype)
        for name in ours._fields:
            mine, other = getattr(ours, name), getattr(theirs, name)
            if name == "header":
                assert (mine.stamp.sec, mine.stamp.nanosec, mine.frame_id) == \
                    (other.stamp.sec, other.stamp.nanosec, other.frame_id), case
            else:
                assert (bytes(mine) == other.tobytes()) if name == "data" else mine == other, (case, name)
        read += 1
    assert read > 1000 and fell_back > 200
    if msgtype == "sensor_msgs/msg/Image":  # the pixels are a view of the message, not a copy
        raw = _message(msgtype, random.Random(1), ros1)
        ours = whole(raw)
        assert ours is not None and np.shares_memory(ours.data, np.frombuffer(raw, np.uint8))
        part = whole(memoryview(raw))  # a part of a larger buffer (a chunk) is copied: a view would keep it all
        assert part is not None and not np.shares_memory(part.data, np.frombuffer(raw, np.uint8))


def test_other_types_have_no_head_parser() -> None:
    assert image_head("sensor_msgs/msg/JointState") is None


@pytest.mark.parametrize("msgtype", ["sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage"])
def test_only_standard_definitions_get_a_parser(msgtype: str) -> None:
    from robokit.ros.heads import defined_as_standard
    from robokit.ros.ros_types import ros_head

    for ros1, store in STORES.items():
        assert defined_as_standard(store.fielddefs, msgtype, ros1)
        assert not defined_as_standard(store.fielddefs, msgtype, not ros1)  # ROS 1 headers carry a seq
    text, _ = STORES[False].generate_msgdef(msgtype, ros_version=2)
    assert ros_head(msgtype, text, "msg", "cdr") is not None
    assert ros_head(msgtype, text.replace("uint8[] data", "uint16[] data"), "msg", "cdr") is None
    assert ros_head(msgtype, text.replace("string frame_id", "string<=8 frame_id"), "msg", "cdr") is None
