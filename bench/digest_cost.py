"""Source digest cost against a conversion of the same recording (the cache key hashes every byte).

Run by hand: `.venv/bin/python bench/digest_cost.py [--seconds 20] [--size 640x480] [--to mcap --to lerobot]`
(`--smoke`: tiny sizes, proves the script runs).
Writes a sample ROS 2 bag, then measures (CPU seconds of this process, best of 3; wall clock in brackets):
the full-content digest of the bag without its memo, the digest again (memo hit), and `export` of the
bag to each format with `use_cache=False`, one worker. The target: digest ≤ 10 % of the conversion.
Measured on a shared 2-core machine (load ~10, TMPDIR=/dev/shm, 20 s at 640x480: a 561 MB bag): digest
0.55 s CPU (about 1 GB/s; blake2b took 1.5 s), memoised 0.1 ms; conversion to mcap 4.9–6.9 s CPU (digest
8–11 %, mostly JPEG-encoding the raw camera), to lerobot 9.2 s CPU (6 %). Wall times were too noisy to quote.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from robokit import digest
from robokit.export import export
from robokit.samples import SampleSpec, write_samples


def best(run: Callable[[], object], repeat: int = 3) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of the fastest of `repeat` runs."""
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        run()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return min(cpu), min(wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--size", default="640x480")
    parser.add_argument("--to", action="append", default=None)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, seconds: proves the script still runs")
    args = parser.parse_args()
    if args.smoke:
        args.seconds, args.size, args.to = 1.0, "64x48", ["mcap"]
    width, height = (int(v) for v in args.size.split("x"))
    work = Path(tempfile.mkdtemp(prefix="robokit-bench-digest-"))
    os.environ["ROBOKIT_CACHE"] = str(work / "cache")
    try:
        write_samples(work / "in", 1, SampleSpec(duration_s=args.seconds, width=width, height=height))
        bag = work / "in" / "episode_000"
        files = sorted(p for p in bag.rglob("*") if p.is_file())
        size = sum(p.stat().st_size for p in files)
        if not args.smoke:
            time.sleep(3.5)  # older than the memo's racy window, so the memo can be used
        def cold() -> None:
            digest._memo.clear()
            shutil.rmtree(work / "cache" / ".digests", ignore_errors=True)
            digest.source_digest(files)

        cold_cpu, cold_wall = best(cold)
        warm_cpu, _ = best(lambda: digest.source_digest(files))
        print(f"bag {size / 1e6:.0f} MB: digest {cold_cpu:.2f} s CPU ({cold_wall:.2f} s wall, "
              f"{size / 1e6 / cold_wall:.0f} MB/s); memoised {warm_cpu * 1e3:.1f} ms CPU")
        for fmt in args.to or ["mcap", "lerobot"]:
            out = work / f"out-{fmt}"
            conv_cpu, conv_wall = best(lambda fmt=fmt, out=out: export(  # type: ignore[misc]
                [bag], [fmt], out, {"overwrite": True}, use_cache=False), repeat=1)
            print(f"{fmt}: conversion {conv_cpu:.2f} s CPU ({conv_wall:.2f} s wall); digest = "
                  f"{100 * cold_cpu / conv_cpu:.1f} % of it (CPU), {100 * cold_wall / conv_wall:.1f} % (wall)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
