"""Index-pass speed of a custom message type (flattened by robokit/ros/generic.py) against a typed builder.

Writes two ROS 2 bags in MCAP storage with the same number of messages at 100 Hz: one of a custom
`acme_msgs/msg/ArmState` (header, float64[7], float32[], string[], bool, int32, string, a nested message, an
array of messages), one of `sensor_msgs/msg/JointState`. Times robokit's index pass (open + every stream) and
rosbags' own deserialisation of every message, best of `--repeat`.
Run by hand: `.venv/bin/python bench/generic_read.py [--messages 50000]`.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.highlevel import AnyReader
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from robokit.sources import open_episodes

T0 = 1_767_225_600_000_000_000
ARM_STATE = """std_msgs/Header header
float64[7] q
float32[] dq
string[] name
bool enabled
int32 mode
string label
geometry_msgs/Point target
geometry_msgs/Point[2] waypoints
"""
NAMES = [f"joint{k}" for k in range(7)]


def write_bag(path: Path, messages: int, custom: bool) -> None:
    ts = get_typestore(Stores.LATEST)
    ts.register(get_types_from_msg(ARM_STATE, "acme_msgs/msg/ArmState"))
    t = ts.types
    msgtype = "acme_msgs/msg/ArmState" if custom else "sensor_msgs/msg/JointState"
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection("/arm/state", msgtype, typestore=ts)
        for i in range(messages):
            ns = T0 + i * 10_000_000
            header = t["std_msgs/msg/Header"](stamp=t["builtin_interfaces/msg/Time"](sec=ns // 10**9,
                                                                                   nanosec=ns % 10**9), frame_id="b")
            q = np.sin(np.arange(7) + i / 100)
            if custom:
                point = t["geometry_msgs/msg/Point"]
                msg = t[msgtype](header=header, q=q, dq=q.astype(np.float32), name=NAMES, enabled=i % 2 == 0,
                                 mode=i % 3, label=f"phase {i // 1000}", target=point(x=q[0], y=q[1], z=q[2]),
                                 waypoints=[point(x=q[k], y=0.0, z=1.0) for k in range(2)])
            else:
                msg = t[msgtype](header=header, name=NAMES, position=q, velocity=q, effort=np.zeros(0))
            writer.write(conn, ns + 1_000_000, ts.serialize_cdr(msg, msgtype))


def robokit_index(path: Path) -> int:
    (episode,) = open_episodes(path)
    return len(episode.streams)


def rosbags_decode(path: Path) -> int:
    ts = get_typestore(Stores.LATEST)
    count = 0
    with AnyReader([path], default_typestore=ts) as reader:
        for conn, _, raw in reader.messages():
            reader.deserialize(raw, conn.msgtype)
            count += 1
    return count


def best(fn: Callable[[Path], Any], path: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(path)
        times.append(time.perf_counter() - start)
    return min(times)


def run(folder: Path, messages: int, repeat: int) -> None:
    for custom in (False, True):
        path = folder / ("custom" if custom else "joint_states")
        if not path.exists():
            write_bag(path, messages, custom)
        rosbags_s, robokit_s = best(rosbags_decode, path, repeat), best(robokit_index, path, repeat)
        print(f"{'ArmState (generic)' if custom else 'JointState (typed)':20s} {messages} messages: rosbags "
              f"{rosbags_s:.2f} s ({messages / rosbags_s:.0f}/s), robokit index pass {robokit_s:.2f} s "
              f"({messages / robokit_s:.0f}/s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/robokit-bench/generic"))
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, seconds: proves the script still runs")
    args = parser.parse_args()
    if args.smoke:
        with tempfile.TemporaryDirectory() as tmp:
            return run(Path(tmp), 200, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    run(args.out, args.messages, args.repeat)


if __name__ == "__main__":
    main()
