"""Export memory as recordings grow: peak RSS summed over every robokit process, short vs long episode.

Writes (once, kept in `--out`, in time order so the writer holds a few frames) one episode per length: a
ROS 2 bag like `robokit sample`'s (raw rgb8 front camera at 30 Hz with its camera_info, JPEG wrist camera
at 15 Hz, joints at 100 Hz, a task), then runs `robokit convert <bag> --to <formats> --no-cache`
in a child process and samples, every 20 ms with psutil, the resident memory of the child and all its
descendants (workers, forkserver) summed; the peak of that sum is what a machine must have. Steady is its median
after the first quarter of the run: it follows the share of the run spent encoding (the highest phase), which grows
with the episode, so compare it between lengths with that in mind. The peak varies from run to run, so each length
is converted `--runs` times (in rounds) and the median and range reported.
Encoded payloads are spilled to files past a bound, and the timeline model's long arrays (numeric streams at their
recorded rate, timestamps) live in mapped files; `arrays MiB` reports those held in memory (and, in brackets, mapped).
Run by hand: `.venv/bin/python bench/export_memory.py [--seconds 15 60 600] [--runs 3] [--formats ...]`.
Measured on a shared 2-core machine, `--seconds 15 60 600 --runs 2`, peak (range) / steady / anonymous peak:
169 (168-170) / 140 / 100, 170 (170-170) / 139 / 100 and 172 (172-172) / 145 / 102 MiB (0.4, 1.7 and 16.8 GB bags;
at 600 s 0.0 MiB of arrays in memory, 11.4 mapped); before this round's changes (spilled parts, smaller arrays
mapped, segments queued a few at a time), with PyAV 18.1.1: 171 (170-172) / 137 / 101 and 176 (176-176) / 148 / 106
MiB at 15 and 600 s. What is left is not held for longer
episodes: inside the process (`--to lerobot`) the 1- and 10-minute episodes' Python objects and arrays while
encoding differ by -0.4 MiB (tracemalloc), and malloc's bytes in use centre on 84 MiB at 15 s and at 10 min, their
highest 85 and 87: the longer run meets more of the allocator's fluctuations.
With `--size 320x240 --seconds 15 600 2400`, one run: 139 / 123 / 70, 142 / 134 / 72 and 145 / 120 / 78 MiB
(before: 143 / 124 / 76, 147 / 138 / 80 and 163 / 144 / 82); in-process, the 40-minute run encodes at the 10-minute
run's memory (64 MiB anonymous, bytes in use at most 45 in both) but once, for 0.2 s, rose to 72 in freed heap pages.
Libraries' file-backed pages (67 to 117 MiB of a peak, by environment) vary between runs on one machine: compare
lengths within one run, and the anonymous peak (robokit's own) across runs.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil
from _procs import compile_robokit, tree_memory

from robokit.ros.bagwriter import START_NS, BagWriter, camera_info, header, joint_state, jpeg_image, raw_image, text
from robokit.ros.bagwriter import typestore as ros_typestore
from robokit.samples.recording import JOINTS, TASKS, frame_pixels, joint_trajectory

MIB = 1 << 20


def write_bag(out: Path, seconds: float, width: int, height: int) -> None:
    """The episode in time order, 10 ms at a time (`robokit sample` writes topic by topic, holding it all)."""
    ts = ros_typestore()
    with BagWriter(out, ts) as bag:
        bag.write(START_NS, "/task", text(ts, TASKS[0]))
        for tick in range(round(seconds * 100)):  # joints at 100 Hz, each camera's frames on the nearest tick
            t = START_NS + tick * 10_000_000
            q = joint_trajectory(np.array([tick / 100]), 0.0)[0]
            bag.write(t + 1_000_000, "/joint_states", joint_state(ts, header(ts, t, "base_link"), JOINTS, q, q, q))
            for cam, hz, hue in (("front", 30, 0), ("wrist", 15, 96)):
                index = tick * hz // 100
                if tick and index == (tick - 1) * hz // 100:
                    continue  # no new frame of this camera in this tick
                frame = f"{cam}_camera_optical"
                hdr, pixels = header(ts, t, frame), frame_pixels(index, width, height, hue)
                image = raw_image(ts, hdr, pixels) if cam == "front" else jpeg_image(ts, hdr, pixels)
                topic = "/camera/front/image_raw" if cam == "front" else "/camera/wrist/image_raw/compressed"
                bag.write(t + 2_000_000, topic, image)
                bag.write(t + 2_000_000, f"/camera/{cam}/camera_info", camera_info(ts, t, frame, width, height))
            bag.advance(t)


def convert(bag: Path, out: Path, formats: list[str], extra: list[str]) -> tuple[float, float, float, float, float]:
    """Run one conversion; returns (peak and steady summed RSS, peak of its anonymous part, all in MiB; when the peak
    came, in % of the run: LeRobot's encoding first, the other formats after; wall seconds). Steady is the median of
    the samples after the first quarter of the run: flat memory shows as the same steady figure for any length.
    Anonymous: without file-backed pages (libraries' code), robokit's own memory."""
    args = [sys.executable, "-c", "from robokit.cli import run; run()", "convert", str(bag),
            *(a for f in formats for a in ("--to", f)), "--out", str(out), "--no-cache", *extra]
    start = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    proc, samples, anon = psutil.Process(child.pid), [0], [0]
    while child.poll() is None:
        try:
            resident, file_backed = tree_memory(proc)
        except psutil.NoSuchProcess:
            break
        samples.append(resident)
        anon.append(resident - file_backed)
        time.sleep(0.02)
    _, err = child.communicate()
    if child.returncode != 0:
        raise SystemExit(f"robokit convert failed ({child.returncode}):\n{err[-3000:]}")
    steady = float(np.median(samples[len(samples) // 4:]))
    at = 100 * int(np.argmax(samples)) / len(samples)
    return max(samples) / MIB, steady / MIB, max(anon) / MIB, at, time.perf_counter() - start


def held_arrays(bag: Path) -> tuple[float, float]:
    """MiB of arrays the timeline model keeps for the episode whole (numeric values, every stream's timestamps and
    frame positions): in memory, what the peak may still grow by with the episode's length; and in mapped files
    (`heap.mapped`), resident only while read."""
    import robokit
    from robokit import heap

    (episode,) = robokit.open([bag])
    arrays = [value for stream in episode.streams.values() for value in vars(stream).values()
              if isinstance(value, np.ndarray)]
    return (sum(a.nbytes for a in arrays if not heap.is_mapped(a)) / MIB,
            sum(a.nbytes for a in arrays if heap.is_mapped(a)) / MIB)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, nargs="+", default=[15.0, 120.0], help="episode lengths")
    parser.add_argument("--formats", nargs="+", default=["lerobot", "rlds", "webdataset", "mcap"])
    parser.add_argument("--size", default="640x480", help="camera image size")
    parser.add_argument("--out", type=Path, default=Path("/tmp/robokit-bench/export-memory"),
                        help="where the sample bags are kept between runs")
    parser.add_argument("--runs", type=int, default=3,
                        help="conversions per length, in rounds over the lengths (the peak varies from run to run)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, seconds: proves the script still runs")
    args = parser.parse_args()
    compile_robokit()
    extra = ["--fps", "30"]
    if args.smoke:
        args.seconds, args.size, args.runs = [0.5, 1.0], "64x48", 1
        args.out = Path(tempfile.mkdtemp(prefix="export-memory-"))
        extra += ["--crf", "50"]
    width, height = (int(v) for v in args.size.split("x"))
    try:
        bags = {}
        for seconds in args.seconds:
            bag = bags[seconds] = args.out / f"sample_{seconds:g}s_{width}x{height}"
            if not bag.exists():
                bag.parent.mkdir(parents=True, exist_ok=True)
                write_bag(bag, seconds, width, height)
        runs: dict[float, list[tuple[float, float, float, float, float]]] = {seconds: [] for seconds in args.seconds}
        for _ in range(args.runs):  # rounds, so that a drift of the machine reaches every length alike
            for seconds, bag in bags.items():
                with tempfile.TemporaryDirectory(prefix="export-memory-out-", dir=args.out) as out:
                    runs[seconds].append(convert(bag, Path(out), args.formats, extra))
        print(f"{'episode':>8} {'bag MB':>8} {'peak MiB, all processes (range)':>32} {'steady MiB':>11} "
              f"{'anonymous peak':>15} {'peak at %':>9} {'wall s':>7} {'arrays MiB (mapped)':>19}   "
              f"median of {args.runs} run(s); formats: {' '.join(args.formats)}")
        for seconds, bag in bags.items():
            size = sum(f.stat().st_size for f in bag.iterdir()) / 1e6
            peak, steady, anon, at, wall = np.array(runs[seconds]).T
            spread = f"{np.median(peak):.0f} ({peak.min():.0f}-{peak.max():.0f})"
            arrays = "{:.1f} ({:.1f})".format(*held_arrays(bag))
            print(f"{seconds:7g}s {size:8.0f} {spread:>32} {np.median(steady):11.0f} {np.median(anon):15.0f} "
                  f"{np.median(at):9.0f} {np.median(wall):7.1f} {arrays:>19}")
    finally:
        if args.smoke:
            shutil.rmtree(args.out, ignore_errors=True)


if __name__ == "__main__":
    main()
