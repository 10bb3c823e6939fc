"""Viam binary and sequence export speed, and reading them back, on generated episodes of JPEG frames + joints.

Run by hand:  .venv/bin/python bench/viam_write.py [--episodes 8 --steps 600]
Frames are pre-encoded 640x480 JPEGs (passed through untouched), joints 7-D at 3x the camera rate, so the
numbers are the writers' own cost: files, JSON lines, Parquet rows and JSON payloads, the zip.
"""

from __future__ import annotations

import argparse
import io
import resource
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.timeline import Episode, EpisodeMeta, EventStream, Frame, ImageStream, NumericStream

W, H, FPS = 640, 480, 30


class _Pool:
    """FrameSource cycling over a few JPEGs (nothing decoded, nothing held per episode)."""

    def __init__(self, pool: list[bytes]) -> None:
        self.pool = pool

    def iter_frames(self, positions: Sequence[int]) -> Iterator[Frame]:
        for p in positions:
            yield Frame("jpeg", data=self.pool[int(p) % len(self.pool)])


def episodes(count: int, steps: int) -> list[Episode]:
    rng = np.random.default_rng(0)
    pool = []
    for _ in range(16):
        buf = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, (H, W, 3), dtype=np.uint8)).save(buf, format="JPEG", quality=90)
        pool.append(buf.getvalue())
    t = (np.arange(steps) * (1e9 / FPS)).round().astype(np.int64)
    tj = (np.arange(3 * steps) * (1e9 / FPS / 3)).round().astype(np.int64)
    out = []
    for e in range(count):
        start = 1_767_225_600_000_000_000 + e * 10**11
        cam = ImageStream("front/rgb", start + t, source=_Pool(pool), width=W, height=H, format="jpeg")
        joints = NumericStream("joints/position", start + tj, rng.normal(size=(len(tj), 7)))
        task = EventStream("task", start + t[:1], ("pick",))
        out.append(Episode(EpisodeMeta(f"bench://{e}", f"ep{e}"), {s.name: s for s in (cam, joints, task)}))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, seconds: proves the script still runs")
    args = parser.parse_args()
    if args.smoke:
        args.episodes, args.steps = 1, 4
    eps = episodes(args.episodes, args.steps)
    import robokit

    tmp = Path(tempfile.mkdtemp(prefix="viam-bench-"))
    try:
        for fmt in ("viam-binary", "viam-sequence"):
            t0 = time.perf_counter()
            result = get_converter(fmt).write(eps, tmp, WriterOptions())
            write_s = time.perf_counter() - t0
            size = sum(f.stat().st_size for f in (tmp / fmt).rglob("*") if f.is_file())
            t0 = time.perf_counter()
            back = robokit.open(tmp / fmt)
            n = sum(len(f.data or b"") for ep in back for f in ep["front/rgb"].frames())  # type: ignore[attr-defined]
            read_s = time.perf_counter() - t0
            print(f"{fmt:14s} {result.frames} images, {size / 1e6:.0f} MB: write {write_s:.2f} s "
                  f"({size / 1e6 / write_s:.0f} MB/s), read every frame back {read_s:.2f} s "
                  f"({n / 1e6 / read_s:.0f} MB/s)")
        print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
