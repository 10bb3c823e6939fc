"""The public recordings in ../shared/fixtures read with the per-topic counts of SOURCES.md, traps included.

Most fixture topics have unmapped types (turtlesim, rcl_interfaces/Log, test_msgs), so counts are checked
through the reader's accounting: per topic, the samples of its streams plus the messages it skipped.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import robokit
from robokit.timeline import Episode, EventStream, NumericStream, PoseStream

TURTLESIM = {
    "/tf": 2688,
    "/turtle1/color_sensor": 1351,
    "/turtle2/color_sensor": 1344,
    "/turtle1/pose": 1344,
    "/turtle2/pose": 1344,
    "/turtle1/cmd_vel": 357,
    "/turtle2/cmd_vel": 208,
    "/rosout": 10,
    "/tf_static": 1,
}
TALKER = {"/topic": 10, "/rosout": 10, "/parameter_events": 0}
CDR_TEST = {"/test_topic": 3, "/array_topic": 4}
SERVICE_EVENTS = {
    "/test_topic1": 1,
    "/test_topic2": 1,
    "/test_service1/_service_event": 4,
    "/test_service2/_service_event": 4,
    "/events/write_split": 0,
}
TOPICS_AND_SERVICES = {
    "/parameter_events": 7,
    "/add_two_ints/_service_event": 6,
    "/rosout": 0,
    "/events/write_split": 0,
    "/add_two_ints2/_service_event": 0,
}
EXPECTED = {
    "ros1/example.bag": TURTLESIM,
    "ros1/example-lz4.bag": TURTLESIM,
    "ros1/example-bz2.bag": TURTLESIM,
    "ros1/example-unsorted-chunks.bag": {"foo": 3},
    "ros1/no-messages.bag": {},
    "rosbag2/talker_mcap": TALKER,
    "rosbag2/talker_mcap/talker.mcap": TALKER,
    "rosbag2/talker_sqlite3": TALKER,
    "rosbag2/talker_sqlite3/talker.db3": TALKER,
    "rosbag2/cdr_test_mcap": CDR_TEST,
    "rosbag2/cdr_test_mcap/cdr_test_0.mcap": CDR_TEST,
    "rosbag2/cdr_test_sqlite3": CDR_TEST,
    "rosbag2/cdr_test_sqlite3/cdr_test_0.db3": CDR_TEST,
    "rosbag2/convert_b": {"c_strings": 50, "a_empty": 25},
    "rosbag2/bag_with_topics_and_service_events": SERVICE_EVENTS,
    "rosbag2/bag_with_topics_and_service_events/bag_with_topics_and_service_events.mcap": SERVICE_EVENTS,
    "rosbag2/cpp_bags/topics_and_services.mcap": TOPICS_AND_SERVICES,
    "rosbag2/cpp_bags/topics_and_services.db3": TOPICS_AND_SERVICES,
    "rosbag2/cpp_bags/only_topics.mcap": {"/parameter_events": 7, "/rosout": 0, "/events/write_split": 0},
    "rosbag2/cpp_bags/only_services.mcap": {"/add_two_ints/_service_event": 12},
    "mcap/empty.mcap": {},
}


def accounted(ep: Episode) -> dict[str, int]:
    """Messages per topic as the reader accounts for them: stream samples (a TF topic sums its child
    frames, other topics give one sample per message to each of their streams) plus skipped messages."""
    tf: Counter[str] = Counter()
    other: dict[str, int] = {}
    for name, stream in ep.streams.items():
        assert stream.origin is not None, name
        if name.startswith("tf/"):
            tf[stream.origin.topic] += len(stream)
        else:
            other[stream.origin.topic] = max(other.get(stream.origin.topic, 0), len(stream))
    counts = Counter(tf) + Counter(other)
    for skipped in ep.skipped:
        counts[skipped.topic] += skipped.count
        counts.setdefault(skipped.topic, 0)
    return dict(counts)


def one(path: Path) -> Episode:
    (ep,) = robokit.open(path)
    return ep


@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_counts(shared_fixtures: Path, relative: str) -> None:
    ep = one(shared_fixtures / relative)
    assert accounted(ep) == EXPECTED[relative]
    info = ep.info().to_dict()  # the empty ones too: no sentinel durations leak out
    assert info["duration_s"] >= 0 and len(info["streams"]) == len(ep.streams)


@pytest.mark.parametrize("name", ["example.bag", "example-lz4.bag", "example-bz2.bag"])
def test_turtlesim_mapped_topics(shared_fixtures: Path, name: str) -> None:
    ep = one(shared_fixtures / "ros1" / name)
    t1, t2, carrot = ep["tf/turtle1"], ep["tf/turtle2"], ep["tf/carrot"]
    assert isinstance(t1, PoseStream) and isinstance(t2, PoseStream) and isinstance(carrot, PoseStream)
    assert (len(t1), len(t2), len(carrot)) == (1344, 1344, 1)
    assert t1.parent_frame == t2.parent_frame == "world" and not t1.static
    assert carrot.static and carrot.parent_frame == "turtle1"
    assert len(ep["turtle1_cmd_vel/twist"]) == 357 and len(ep["turtle2_cmd_vel/twist"]) == 208
    pose = ep["turtle1/pose"]  # turtlesim/Pose, flattened by its fields; /rosout's first message starts the episode
    assert isinstance(pose, NumericStream) and pose.names == ("x", "y", "theta", "linear_velocity", "angular_velocity")
    assert len(pose) == 1344 and ep["rosout/msg"].kind == "event"
    assert ep.start_ns == ep["rosout"].start_ns >= 1396293885935147790 and 23.0 < ep.duration_s < 23.8


def test_unsorted_chunks_in_time_order_near_the_epoch(shared_fixtures: Path) -> None:
    foo = one(shared_fixtures / "ros1" / "example-unsorted-chunks.bag")["foo/events"]
    assert isinstance(foo, EventStream)
    assert foo.values == ("1", "2", "3")
    assert foo.timestamps.tolist() == [1_000_000_000, 2_000_000_000, 3_000_000_000]


@pytest.mark.parametrize(
    "relative", ["rosbag2/talker_mcap", "rosbag2/talker_sqlite3", "rosbag2/talker_mcap/talker.mcap"]
)
def test_talker_strings_despite_the_qos_trap(shared_fixtures: Path, relative: str) -> None:
    topic = one(shared_fixtures / relative)["topic/events"]
    assert isinstance(topic, EventStream) and len(topic) == 10
    assert np.all(np.diff(topic.timestamps) > 0) and topic.timestamps[0] >= 1585866235112411371


def test_empty_recordings(shared_fixtures: Path) -> None:
    for relative in ("ros1/no-messages.bag", "mcap/empty.mcap"):
        ep = one(shared_fixtures / relative)
        assert ep.streams == {} and ep.skipped == [] and ep.duration_s == 0
