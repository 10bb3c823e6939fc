"""Export memory as recordings grow: peak RSS summed over every robokit process, short vs long episode.

Writes (once, kept in `--out`) one sample episode per length (a ROS 2 bag: raw rgb8 front camera at 30 Hz,
JPEG wrist camera at 15 Hz, joints at 100 Hz), then runs `robokit convert <bag> --to <formats> --no-cache`
in a child process and samples, every 20 ms with psutil, the resident memory of the child and all its
descendants (workers, forkserver) summed; the peak of that sum is what a machine must have. Encoded
payloads are spilled to files, so the peak should not grow with the episode.
Run by hand: `.venv/bin/python bench/export_memory.py [--seconds 15 120] [--formats lerobot rlds webdataset mcap]`.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from robokit.samples.recording import SampleSpec, write_sample_bag

MIB = 1 << 20


def summed_rss(proc: psutil.Process) -> int:
    """Resident bytes of `proc` and all its descendants (processes that exit meanwhile count as 0)."""
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total


def convert(bag: Path, out: Path, formats: list[str], extra: list[str]) -> tuple[float, float]:
    """Run one conversion; returns (peak summed RSS in MiB, wall seconds)."""
    args = [sys.executable, "-c", "from robokit.cli import main; main()", "convert", str(bag),
            *(a for f in formats for a in ("--to", f)), "--out", str(out), "--no-cache", *extra]
    start = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    proc, peak = psutil.Process(child.pid), 0
    while child.poll() is None:
        try:
            peak = max(peak, summed_rss(proc))
        except psutil.NoSuchProcess:
            break
        time.sleep(0.02)
    _, err = child.communicate()
    if child.returncode != 0:
        raise SystemExit(f"robokit convert failed ({child.returncode}):\n{err[-3000:]}")
    return peak / MIB, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, nargs="+", default=[15.0, 120.0], help="episode lengths")
    parser.add_argument("--formats", nargs="+", default=["lerobot", "rlds", "webdataset", "mcap"])
    parser.add_argument("--size", default="640x480", help="camera image size")
    parser.add_argument("--out", type=Path, default=Path("/tmp/robokit-bench/export-memory"),
                        help="where the sample bags are kept between runs")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, seconds: proves the script still runs")
    args = parser.parse_args()
    extra = ["--fps", "30"]
    if args.smoke:
        args.seconds, args.size, args.out = [0.5, 1.0], "64x48", Path(tempfile.mkdtemp(prefix="export-memory-"))
        extra += ["--crf", "50"]
    width, height = (int(v) for v in args.size.split("x"))
    try:
        print(f"{'episode':>8} {'bag MB':>8} {'peak MiB (all processes)':>26} {'wall s':>7}   formats: "
              f"{' '.join(args.formats)}")
        for seconds in args.seconds:
            bag = args.out / f"sample_{seconds:g}s_{width}x{height}"
            if not bag.exists():
                bag.parent.mkdir(parents=True, exist_ok=True)
                write_sample_bag(bag, SampleSpec(duration_s=seconds, width=width, height=height))
            size = sum(f.stat().st_size for f in bag.iterdir()) / 1e6
            with tempfile.TemporaryDirectory(prefix="export-memory-out-", dir=args.out) as out:
                peak, wall = convert(bag, Path(out), args.formats, extra)
            print(f"{seconds:7g}s {size:8.0f} {peak:26.0f} {wall:7.1f}")
    finally:
        if args.smoke:
            shutil.rmtree(args.out, ignore_errors=True)


if __name__ == "__main__":
    main()
