"""Simulator recording speed: the demo's 3 episodes of 6 s at 160x120, and where the time goes.

Run by hand: `.venv/bin/python bench/sim_record.py [--episodes 3] [--duration 6] [--size 160x120]`.
Prints wall time per episode and in total, and the share spent rendering (MuJoCo on Mesa EGL, software).
Measured on the shared 2-core machine while other jobs ran (load 1.3–3.5): 16–23 s for 3 x 6 s at 160x120
(4.5–7.5 s per episode), 80 % of it rendering (shadow map and multisampling on llvmpipe), 34 MB written;
the rest (physics, IK, JPEG, bag writing) about 1 s per episode.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
import time
from pathlib import Path

from robokit.converters.options import parse_size
from robokit.sim.record import RecordSpec, record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--duration", type=float, default=6.0)
    parser.add_argument("--size", default="160x120")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, seconds: proves the script still runs")
    args = parser.parse_args()
    if args.smoke:
        args.episodes, args.duration, args.size = 1, 0.5, "64x48"
    width, height = parse_size(args.size)
    spec = RecordSpec(duration_s=args.duration, width=width, height=height)
    with tempfile.TemporaryDirectory() as tmp:
        profile = cProfile.Profile()
        began = time.perf_counter()
        profile.enable()
        results = record(Path(tmp) / "sim", args.episodes, spec)
        profile.disable()
        total = time.perf_counter() - began
        size = sum(f.stat().st_size for f in Path(tmp).rglob("*") if f.is_file())
    stats = pstats.Stats(profile).stats
    rendering = sum(v[3] for k, v in stats.items() if "mjr_render" in k[2] or "mjr_readPixels" in k[2])
    for r in results:
        print(f"{r.path.name}: {r.seconds:.2f} s, cube {'placed' if r.placed else 'missed'}")
    print(f"{args.episodes} x {args.duration:g} s at {width}x{height}: {total:.2f} s wall, "
          f"{rendering / total:.0%} rendering, {size / 1e6:.1f} MB written")


if __name__ == "__main__":
    main()
