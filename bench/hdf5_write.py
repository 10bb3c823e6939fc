"""HDF5 → LeRobot: speed and peak memory converting ALOHA-like episode files (raw 480x640 images, 4 cameras).

Run by hand (the issue's target: a file over 1 GB converts under 600 MiB resident in total):
    .venv/bin/python bench/hdf5_write.py [--gb 1.1 --episodes 1 --workers 1 --codec av1]
The files are written frame by frame (the benchmark itself stays small); `robokit convert --no-cache` runs
in a process of its own and the resident memory of it and all its children is summed every 20 ms.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil
from _procs import compile_robokit, tree_rss

CAMERAS = ("cam_high", "cam_low", "cam_left_wrist", "cam_right_wrist")
FPS = 50


def pixels(ep: int, i: int, cam: int, h: int, w: int) -> np.ndarray:
    """A cheap deterministic frame with texture and motion (so the encoder does real work)."""
    y, x = np.ogrid[0:h, 0:w]
    img = np.empty((h, w, 3), dtype=np.uint8)
    img[..., 0] = (x + 3 * i + 40 * cam) % 256
    img[..., 1] = (y + 2 * i + 17 * ep) % 256
    img[..., 2] = ((x // 16 + y // 16 + i) % 2) * 200
    return img


def write_episode(path: Path, ep: int, frames: int, h: int, w: int) -> None:
    """One ALOHA/ACT file, raw images in one chunk per frame, as ACT's recorder writes them."""
    import h5py

    rng = np.random.default_rng(ep)
    with h5py.File(path, "w") as f:
        f.attrs["sim"] = False
        f.attrs["compress"] = False
        obs = f.create_group("observations")
        for key in ("qpos", "qvel", "effort"):
            obs[key] = rng.normal(size=(frames, 14))
        f["action"] = rng.normal(size=(frames, 14))
        for c, cam in enumerate(CAMERAS):
            ds = obs.create_dataset(f"images/{cam}", (frames, h, w, 3), np.uint8, chunks=(1, h, w, 3))
            for i in range(frames):
                ds[i] = pixels(ep, i, c, h, w)


def convert(folder: Path, out: Path, workers: int, codec: str) -> tuple[float, int, int]:
    """(seconds, peak summed RSS bytes, exit code) of `robokit convert folder --to lerobot`."""
    code = "import sys; from robokit.cli import main; sys.exit(main(sys.argv[1:]))"
    cmd = [sys.executable, "-c", code, "convert", str(folder), "--to", "lerobot", "--out", str(out),
           "--fps", str(FPS), "--no-cache", "--workers", str(workers), "--codec", codec]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    tree, peak = psutil.Process(proc.pid), 0  # the child's pid stays valid until it is reaped
    while proc.poll() is None:
        peak = max(peak, tree_rss(tree))
        time.sleep(0.02)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr.read() if proc.stderr else "")
    return seconds, peak, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gb", type=float, default=1.1, help="size of each episode file (raw images), GB")
    ap.add_argument("--episodes", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--size", default="640x480", help="image width x height")
    ap.add_argument("--codec", default="av1", choices=("av1", "h264"), help="LeRobot video codec")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, seconds: proves the script still runs")
    args = ap.parse_args()
    compile_robokit()
    w, h = (int(v) for v in args.size.split("x"))
    if args.smoke:
        args.gb, args.episodes, w, h = 0.0002, 2, 32, 24
    frames = max(2, round(args.gb * 1e9 / (len(CAMERAS) * h * w * 3)))
    work = Path(tempfile.mkdtemp(prefix="bench-hdf5-"))
    try:
        folder = work / "aloha"
        folder.mkdir()
        for ep in range(args.episodes):
            write_episode(folder / f"episode_{ep}.hdf5", ep, frames, h, w)
        size = sum(p.stat().st_size for p in folder.iterdir())
        seconds, peak, code = convert(folder, work / "out", args.workers, args.codec)
        if code != 0:
            raise SystemExit(f"robokit convert exited {code}")
        info = json.loads((work / "out" / "lerobot" / "meta" / "info.json").read_text())
        written = int(info["total_frames"])
        if written != args.episodes * frames:
            raise SystemExit(f"wrote {written} frames, expected {args.episodes * frames}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{args.episodes} ALOHA episode(s) x {frames} frames x {len(CAMERAS)} cameras at {w}x{h} raw, "
          f"{size / 1e9:.2f} GB of HDF5, workers {args.workers}, {args.codec}")
    print(f"{'frames/s':>10}{'MB/s read':>11}{'seconds':>9}{'peak RSS MiB (all processes)':>30}")
    print(f"{written / seconds:>10.1f}{size / 1e6 / seconds:>11.1f}{seconds:>9.1f}{peak / 2**20:>30.0f}")


if __name__ == "__main__":
    main()
