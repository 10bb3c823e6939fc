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
166 (166-166) / 133 / 100, 167 (167-168) / 135 / 101 and 169 (169-170) / 141 / 102 MiB (0.4, 1.7 and 16.8 GB bags;
at 600 s 0.0 MiB of arrays in memory, 11.4 mapped); the 10-minute run's peak in each tenth of its encoding 168-169,
no rise. Before two encoders ending at once could inflate the trim baseline (`heap._trim_measured`), the same day:
166 / 168 / 175 (170-181). What is left is not held for longer episodes: the kernel maps 64 KiB around each page
fault, so the mapped arrays a long episode reads a frame at a time keep 0.6 MiB resident between drops (a constant),
and over equal windows of encoding the 10-minute run's anonymous peak centres 1.8 MiB above the 15-second one's
(100.6 against 98.8 MiB); in-process (`--to lerobot`), 94 MiB at 15 s, 95 in each of five 10-minute runs (95 to
109 in five before).
With `--size 320x240 --seconds 15 600 2400`, one run: 136 / 119 / 69, 139 / 134 / 71 and 141 / 121 / 75 MiB
(the session before: 139 / 123 / 70, 142 / 134 / 72 and 145 / 120 / 78); the 40-minute run's tenths while
encoding 136-141.
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
from typing import NamedTuple

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


class Run(NamedTuple):
    """One conversion's memory, in MiB: `peak` and `steady` (median after the first quarter) of the summed RSS,
    `anon` the peak of its anonymous part (without file-backed pages: robokit's own memory), `at` when the peak
    came (% of the run: LeRobot's encoding first, the other formats after), `wall` seconds, and `tenths` the peak
    in each tenth of the run: memory that grew with the episode would rise from tenth to tenth within a long run."""

    peak: float
    steady: float
    anon: float
    at: float
    wall: float
    tenths: tuple[float, ...]


def convert(bag: Path, out: Path, formats: list[str], extra: list[str]) -> Run:
    """Run one conversion, sampling its process tree's memory every 20 ms."""
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
    tenths = tuple(float(part.max()) / MIB for part in np.array_split(np.array(samples), 10) if part.size)
    return Run(max(samples) / MIB, float(np.median(samples[len(samples) // 4:])) / MIB, max(anon) / MIB,
               100 * int(np.argmax(samples)) / len(samples), time.perf_counter() - start, tenths)


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
        runs: dict[float, list[Run]] = {seconds: [] for seconds in args.seconds}
        for _ in range(args.runs):  # rounds, so that a drift of the machine reaches every length alike
            for seconds, bag in bags.items():
                with tempfile.TemporaryDirectory(prefix="export-memory-out-", dir=args.out) as out:
                    runs[seconds].append(convert(bag, Path(out), args.formats, extra))
        print(f"{'episode':>8} {'bag MB':>8} {'peak MiB, all processes (range)':>32} {'steady MiB':>11} "
              f"{'anonymous peak':>15} {'peak at %':>9} {'wall s':>7} {'arrays MiB (mapped)':>19}   "
              f"median of {args.runs} run(s); formats: {' '.join(args.formats)}")
        for seconds, bag in bags.items():
            size = sum(f.stat().st_size for f in bag.iterdir()) / 1e6
            peak, steady, anon, at, wall = (np.array([getattr(run, field) for run in runs[seconds]])
                                            for field in ("peak", "steady", "anon", "at", "wall"))
            spread = f"{np.median(peak):.0f} ({peak.min():.0f}-{peak.max():.0f})"
            arrays = "{:.1f} ({:.1f})".format(*held_arrays(bag))
            print(f"{seconds:7g}s {size:8.0f} {spread:>32} {np.median(steady):11.0f} {np.median(anon):15.0f} "
                  f"{np.median(at):9.0f} {np.median(wall):7.1f} {arrays:>19}")
        print("peak MiB in each tenth of the run (median of the runs): flat memory shows no rise within a run")
        for seconds in bags:
            tenths = np.median(np.array([run.tenths for run in runs[seconds] if len(run.tenths) == 10]), axis=0)
            print(f"{seconds:7g}s  " + " ".join(f"{t:5.0f}" for t in np.atleast_1d(tenths)))
    finally:
        if args.smoke:
            shutil.rmtree(args.out, ignore_errors=True)


if __name__ == "__main__":
    main()
