"""RLDS and WebDataset writing speed (MB/s of output) on a generated dataset of over 1 GB, and the CRC's share.

Run by hand:  .venv/bin/python bench/rlds_webdataset_write.py [--episodes 12 --steps 300 --repeat 2]
Frames are pre-encoded 640x480 JPEGs (noise, ~270 KB each, two cameras) so the writers pass them through and
the numbers are the writers' own cost (Example encoding, framing, CRC, tar members, disk), not JPEG encoding.
Each run is a child process so its peak RSS is its own; CRC-32C calls are timed inside the write, and a run
with a constant in place of the CRC prices it again.
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

W, H, FPS, CAMERAS = 640, 480, 30, ("front", "wrist")
POOL = 384  # distinct frames: ~100 MB, more than the CPU caches, so CRC and copies read from memory


def jpeg_pool() -> list[bytes]:
    """A few distinct noisy JPEGs, reused cyclically (content does not change what a writer costs)."""
    from PIL import Image

    rng = np.random.default_rng(0)
    out = []
    for _ in range(POOL):
        buf = io.BytesIO()
        Image.fromarray(rng.integers(0, 256, (H, W, 3), dtype=np.uint8)).save(buf, format="JPEG", quality=90)
        out.append(buf.getvalue())
    return out


class _Pool:
    """FrameSource of JPEG bytes from the pool (nothing decoded, nothing held per episode)."""

    def __init__(self, pool: list[bytes], offset: int) -> None:
        self.pool, self.offset = pool, offset

    def iter_frames(self, positions: Sequence[int]) -> Iterator[object]:
        from robokit.timeline import Frame

        for p in positions:
            yield Frame("jpeg", data=self.pool[(int(p) + self.offset) % len(self.pool)])


def episodes(count: int, steps: int) -> list[object]:
    from robokit.timeline import Episode, EpisodeMeta, EventStream, ImageStream, NumericStream

    pool = jpeg_pool()
    t = (np.arange(steps) * (1e9 / FPS)).round().astype(np.int64)
    out = []
    for e in range(count):
        streams = {"joints/position": NumericStream("joints/position", t,
                                                    values=np.random.default_rng(e).normal(size=(steps, 7))),
                   "task": EventStream("task", t[:1], values=("bench",))}
        for c, cam in enumerate(CAMERAS):
            streams[f"{cam}/rgb"] = ImageStream(f"{cam}/rgb", t, source=_Pool(pool, 7 * e + 13 * c), width=W,
                                                height=H, format="jpeg")
        out.append(Episode(EpisodeMeta(f"bench://{e}", f"ep{e:03d}"), streams))
    return out


def child(fmt: str, count: int, steps: int, crc: bool) -> None:
    from robokit.converters import get_converter
    from robokit.converters.options import WriterOptions
    from robokit.converters.rlds import records

    real, crc_seconds = records.crc32c.crc32c, [0.0]

    def timed(data: bytes, value: int = 0) -> int:
        start = time.perf_counter()
        out = real(data, value)
        crc_seconds[0] += time.perf_counter() - start
        return out

    records.crc32c.crc32c = timed if crc else (lambda data, value=0: 0)  # type: ignore[assignment,misc]
    eps = episodes(count, steps)
    out = Path(tempfile.mkdtemp(prefix=f"bench-{fmt}-", dir=str(Path.cwd() / "build")))
    try:
        start = time.perf_counter()
        get_converter(fmt).write(eps, out, WriterOptions(fps=FPS, action="joints/position_delta"))  # type: ignore[arg-type]
        seconds = time.perf_counter() - start
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        shards = sum(1 for p in out.rglob("*") if p.suffix == ".tar" or ".tfrecord-" in p.name)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"format": fmt, "crc": crc, "bytes": size, "seconds": seconds, "shards": shards,
                      "peak_rss_mb": rss, "crc_seconds": crc_seconds[0]}))


def crc_speed() -> float:
    """CRC-32C throughput in bytes/s on a 64 MiB buffer (the `crc32c` package)."""
    import crc32c

    buf = np.random.default_rng(1).integers(0, 256, 64 << 20, dtype=np.uint8).tobytes()
    start = time.perf_counter()
    for _ in range(8):
        crc32c.crc32c(buf)
    return 8 * len(buf) / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--episodes", type=int, default=12)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--child")
    ap.add_argument("--no-crc", action="store_true")
    ap.add_argument("--repeat", type=int, default=2, help="runs per variant; the fastest is reported")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, seconds: proves the script still runs")
    args = ap.parse_args()
    global POOL
    if args.smoke:
        args.episodes, args.steps, args.repeat, POOL = 1, 4, 1, 4
    if args.child:
        child(args.child, args.episodes, args.steps, not args.no_crc)
        return
    (Path.cwd() / "build").mkdir(exist_ok=True)
    rows = []
    for fmt, extra in (("rlds", ["--no-crc"]), ("rlds", []), ("webdataset", [])):
        cmd = [sys.executable, __file__, "--child", fmt, "--episodes", str(args.episodes), "--steps", str(args.steps),
               *extra, *(["--smoke"] if args.smoke else [])]
        runs = [json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()[-1])
                for _ in range(args.repeat)]
        rows.append(min(runs, key=lambda r: r["seconds"]))
    print(f"{args.episodes} episodes x {args.steps} steps x {len(CAMERAS)} JPEG cameras {W}x{H} (passed through)")
    print(f"{'format':<12}{'crc':>5}{'GB out':>9}{'shards':>8}{'seconds':>9}{'MB/s':>8}{'peak RSS MB':>13}")
    for r in rows:
        print(f"{r['format']:<12}{'yes' if r['crc'] else 'no':>5}{r['bytes'] / 1e9:>9.2f}{r['shards']:>8}"
              f"{r['seconds']:>9.2f}{r['bytes'] / 1e6 / r['seconds']:>8.0f}{r['peak_rss_mb']:>13.0f}")
    speed = crc_speed()
    without, with_crc = rows[0], rows[1]
    print(f"CRC-32C in the RLDS write: {with_crc['crc_seconds']:.2f} s of {with_crc['seconds']:.2f} s "
          f"({100 * with_crc['crc_seconds'] / with_crc['seconds']:.1f} %); {speed / 1e9:.1f} GB/s on one 64 MiB "
          f"buffer; write time with minus without CRC: {with_crc['seconds'] - without['seconds']:+.2f} s")


if __name__ == "__main__":
    main()
