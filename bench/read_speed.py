"""Read throughput of robokit's readers against rosbags' own AnyReader on one large ROS 2 MCAP bag.

Writes (once) a ROS 2 bag in MCAP storage of rgb8 640×480 images at 30 Hz plus joint states at 100 Hz,
then times, each in a fresh process so peak memory is per reader, with each library's modules imported
before the clock starts (robokit's reader modules are reported apart as `imports`):
  robokit: open_episodes + index pass + every stream loaded + every frame of every image stream decoded;
  rosbags: AnyReader iteration + deserialisation of every message.
Prints the median of `--repeat` runs. Run by hand:
`.venv/bin/python bench/read_speed.py [--seconds 11] [--out /tmp/robokit-bench/bag]`.
Measured on a shared 2-core machine (304 MB bag), 3 runs: rosbags 0.26-0.29 s (1041-1150 MB/s), robokit 0.15 s
(2058-2093 MB/s), plus 0.13 s importing robokit's reader modules.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rosbags.highlevel import AnyReader
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from robokit.sources import open_episodes
from robokit.sources.registry import readers
from robokit.timeline import ImageStream

T0 = 1_767_225_600_000_000_000
WIDTH, HEIGHT = 640, 480


def write_bag(path: Path, seconds: float) -> None:
    """rgb8 640×480 at 30 Hz and 7-joint states at 100 Hz, interleaved in time order."""
    ts = get_typestore(Stores.LATEST)
    t = ts.types
    rng = np.random.default_rng(0)
    base = rng.integers(0, 255, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    events = [(T0 + round(i * 1e9 / 30), "image", i) for i in range(int(seconds * 30))]
    events += [(T0 + round(i * 1e9 / 100), "joints", i) for i in range(int(seconds * 100))]
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        cam = writer.add_connection("/camera/front/image_raw", "sensor_msgs/msg/Image", typestore=ts)
        joints = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=ts)
        for ns, kind, i in sorted(events):
            stamp = t["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9)
            header = t["std_msgs/msg/Header"](stamp=stamp, frame_id="front")
            if kind == "image":
                pixels = np.roll(base, i, axis=1)
                msg = t["sensor_msgs/msg/Image"](header, HEIGHT, WIDTH, "rgb8", 0, WIDTH * 3, pixels.reshape(-1))
                writer.write(cam, ns + 1_000_000, ts.serialize_cdr(msg, "sensor_msgs/msg/Image"))
            else:
                q = np.sin(np.arange(7) + i / 100)
                msg = t["sensor_msgs/msg/JointState"](header, [f"j{k}" for k in range(7)], q, q, np.zeros(0))
                writer.write(joints, ns + 500_000, ts.serialize_cdr(msg, "sensor_msgs/msg/JointState"))


def read_robokit(path: Path) -> dict[str, float]:
    start = time.perf_counter()
    readers()  # imports every reader module (once per process)
    imported = time.perf_counter()
    imports, start = imported - start, imported
    (episode,) = open_episodes(path)
    streams = episode.streams
    indexed = time.perf_counter()
    frames = 0
    for stream in streams.values():
        if isinstance(stream, ImageStream):
            for frame in stream.frames():
                frames += frame.array().shape[0] > 0
    return {"index_s": indexed - start, "total_s": time.perf_counter() - start, "frames": frames,
            "imports_s": imports}


def read_rosbags(path: Path) -> dict[str, float]:
    start = time.perf_counter()
    messages = 0
    with AnyReader([path], default_typestore=get_typestore(Stores.LATEST)) as reader:
        for conn, _, raw in reader.messages():
            reader.deserialize(raw, conn.msgtype)
            messages += 1
    return {"total_s": time.perf_counter() - start, "messages": messages}


def measure(which: str, path: Path) -> dict[str, float]:
    """Run one reader in a fresh process and return its timings and peak RSS (MiB)."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", which, "--out", str(path)], check=True, capture_output=True, text=True
    )
    result: dict[str, float] = json.loads(out.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/robokit-bench/bag"))
    parser.add_argument("--seconds", type=float, default=11.0, help="recording length (11 s ≈ 305 MB)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--child", choices=("robokit", "rosbags"), help=argparse.SUPPRESS)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, seconds: proves the script still runs")
    args = parser.parse_args()
    if args.smoke and not args.child:
        with tempfile.TemporaryDirectory() as tmp:
            return run(Path(tmp) / "bag", 0.3, 1)
    if args.child:
        result = read_robokit(args.out) if args.child == "robokit" else read_rosbags(args.out)
        result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return
    run(args.out, args.seconds, args.repeat)


def run(out: Path, seconds: float, repeat: int) -> None:
    """Write the bag once (kept for later runs), then time both readers `repeat` times each (median printed)."""
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        write_bag(out, seconds)
    size_mb = sum(f.stat().st_size for f in out.iterdir()) / 1e6
    print(f"bag: {out} ({size_mb:.0f} MB)")
    for which in ("rosbags", "robokit"):
        runs = sorted((measure(which, out) for _ in range(repeat)), key=lambda r: r["total_s"])
        mid = runs[len(runs) // 2]
        extra = f", index pass {mid['index_s']:.2f} s, imports {mid['imports_s']:.2f} s" if "index_s" in mid else ""
        print(
            f"{which:8s} median of {repeat}: {mid['total_s']:.2f} s = {size_mb / mid['total_s']:.0f} MB/s"
            f"{extra}, peak RSS {mid['peak_rss_mib']:.0f} MiB"
        )


if __name__ == "__main__":
    main()
