"""Field access over every decoder's objects: stamps in all spellings, type names, JSON dicts."""

from __future__ import annotations

from types import SimpleNamespace as NS
from typing import Any

import pytest

from robokit.ros import fields


@pytest.mark.parametrize(
    "stamp",
    [
        NS(sec=3, nanosec=5),
        NS(secs=3, nsecs=5),
        NS(seconds=3, nanos=5),
        NS(sec=3, nsec=5),
        fields.wrap_json({"sec": 3, "nsec": 5}),
    ],
)
def test_time_ns(stamp: Any) -> None:
    assert fields.time_ns(stamp) == 3_000_000_005
    assert fields.header_stamp(NS(header=NS(stamp=stamp))) == 3_000_000_005
    assert fields.header_stamp(NS(timestamp=stamp)) == 3_000_000_005
    assert fields.header_stamp(NS(data="no stamp")) == 0


def test_normalize_type() -> None:
    assert fields.normalize_type("sensor_msgs/Image") == "sensor_msgs/msg/Image"
    assert fields.normalize_type("sensor_msgs/msg/Image") == "sensor_msgs/msg/Image"
    assert fields.normalize_type("foxglove_msgs/msg/RawImage") == "foxglove.RawImage"
    assert fields.normalize_type("foxglove.RawImage") == "foxglove.RawImage"
    assert fields.normalize_type("example_interfaces/srv/AddTwoInts_Event") == "example_interfaces/srv/AddTwoInts_Event"


def test_json_message_access() -> None:
    m = fields.wrap_json({"header": {"stamp": {"sec": 1, "nanosec": 2}}, "items": [{"x": 1}], "v": 3})
    assert m.v == 3 and m.items[0].x == 1 and fields.header_stamp(m) == 1_000_000_002
    with pytest.raises(AttributeError):
        _ = m.missing
