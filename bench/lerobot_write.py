"""LeRobot writing speed on raw frames: `robokit convert --to lerobot` vs the bare PyAV encoder, same frames, one run.

Writes (once per run) ROS 2 bags with an rgb8 640×480 camera and a JPEG 320×240 camera at 30 Hz plus joint
states, then times in fresh processes:
  bare: PyAV encoding the bags' decoded frames (held in memory, decoding not timed), one thread per camera,
        the same codec settings (libsvtav1 crf 30, g 2, preset 12): the encoder's own limit;
  robokit: `robokit convert BAGS --to lerobot --fps 30 --no-cache` (its default workers), read to MP4s;
  lerobot, lerobot-streaming: lerobot's own writer fed the same decoded frames (conformance environment only).
Peak memory is the resident memory summed over the variant's whole process tree (workers included), sampled
with psutil. `--rounds N` runs the variants in turn N times and prints medians, each round's ratio pairing
runs made seconds apart (a shared machine's speed drifts). Run by hand:
`.venv/bin/python bench/lerobot_write.py [--episodes 3 --seconds 10 --rounds 5]`. One round's ratio moves by ±15 % on a
shared machine (the same work's CPU time varies that much between runs), so the default is 5 rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import psutil
from _procs import compile_robokit, tree_rss

FPS = 30
CAMERAS = {"front": (640, 480), "wrist": (320, 240)}  # front: rgb8 Image; wrist: JPEG CompressedImage
CODEC = {"crf": 30, "gop": 2, "preset": 12}


def pixels(ep: int, i: int, width: int, height: int) -> np.ndarray:
    """A cheap, deterministic frame with texture and motion (so the encoder does real work)."""
    y, x = np.ogrid[0:height, 0:width]
    img = np.empty((height, width, 3), dtype=np.uint8)
    img[..., 0] = (x + 3 * i + width // 8) % 256
    img[..., 1] = (y + 2 * i + 17 * ep) % 256
    img[..., 2] = ((x // 16 + y // 16 + i) % 2) * 200
    return img


def write_bags(root: Path, episodes: int, frames: int) -> list[Path]:
    """One ROS 2 bag per episode: both cameras and /joint_states at 100 Hz, stamps on the 30 Hz grid."""
    from robokit.ros.bagwriter import (
        START_NS,
        TOPIC_TYPES,
        BagWriter,
        header,
        joint_state,
        jpeg_image,
        raw_image,
        text,
        typestore,
    )

    ts = typestore()
    topics = ("/task", "/joint_states", "/camera/front/image_raw", "/camera/wrist/image_raw/compressed")
    paths = []
    for e in range(episodes):
        start = START_NS + e * 60_000_000_000
        with BagWriter(root / f"episode_{e:03d}", ts, {t: TOPIC_TYPES[t] for t in topics}) as bag:
            bag.write(start, "/task", text(ts, "bench"))
            for k in range(frames * 10 // 3 + 1):
                t = start + k * 10_000_000
                q = np.sin(np.arange(7) + k / 100)
                bag.write(t, "/joint_states", joint_state(ts, header(ts, t, "base"), tuple(f"j{j}" for j in range(7)),
                                                          q, q, q))
            for i in range(frames):
                t = start + round(i * 1e9 / FPS)
                front, wrist = (pixels(e, i, *CAMERAS[cam]) for cam in ("front", "wrist"))
                bag.write(t, "/camera/front/image_raw", raw_image(ts, header(ts, t, "front"), front))
                bag.write(t, "/camera/wrist/image_raw/compressed", jpeg_image(ts, header(ts, t, "wrist"), wrist))
                bag.advance(t - 1_000_000_000)
        paths.append(root / f"episode_{e:03d}")
    return paths


def decoded(bag: Path) -> dict[str, list[np.ndarray] | None]:
    """Every camera frame of one bag as robokit decodes it, by camera name."""
    from robokit.sources import open_episodes
    from robokit.timeline import ImageStream

    (episode,) = open_episodes(bag)
    out = {}
    for name, stream in episode.streams.items():
        if isinstance(stream, ImageStream):
            out[name.split("/")[0]] = [frame.array() for frame in stream.frames()]
    return out


def run_bare(bags: list[Path], out: Path) -> tuple[float, int]:
    """The encoder's limit: PyAV alone encoding the decoded RGB frames with the same settings (yuv420p, one thread
    per camera, one file per camera); no robokit code runs while it is timed."""
    from concurrent.futures import ThreadPoolExecutor

    import av

    os.environ.setdefault("SVT_LOG", "1")  # as robokit does: no SVT-AV1 banner per stream
    options = {"crf": str(CODEC["crf"]), "g": str(CODEC["gop"]), "preset": str(CODEC["preset"])}
    containers = {cam: av.open(str(out / f"{cam}.mp4"), mode="w") for cam in CAMERAS}
    streams = {}
    for cam, (w, h) in CAMERAS.items():
        stream = containers[cam].add_stream("libsvtav1", rate=FPS, options=options)
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        streams[cam] = stream
    counts = dict.fromkeys(CAMERAS, 0)

    def encode(cam: str, frames: list[np.ndarray] | None) -> None:
        for f in frames if frames is not None else [None]:
            frame = None if f is None else av.VideoFrame.from_numpy_buffer(f, format="rgb24")
            if frame is not None:
                frame.pts = counts[cam]
                counts[cam] += 1
            for packet in streams[cam].encode(frame):
                containers[cam].mux(packet)
        if frames is None:
            containers[cam].close()

    seconds = 0.0
    with ThreadPoolExecutor(len(CAMERAS)) as pool:
        for bag in [*bags, None]:
            frames = decoded(bag) if bag is not None else dict.fromkeys(CAMERAS)
            start = time.perf_counter()
            list(pool.map(encode, CAMERAS, [frames[cam] for cam in CAMERAS]))
            seconds += time.perf_counter() - start
    return seconds, min(counts.values())


def run_lerobot(bags: list[Path], out: Path, streaming: bool) -> tuple[float, int]:
    """lerobot's own writer on the same decoded frames (decoding not timed)."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    features = {"observation.state": {"dtype": "float32", "shape": (7,), "names": None}}
    for cam, (w, h) in CAMERAS.items():
        features[f"observation.images.{cam}"] = {"dtype": "video", "shape": (h, w, 3),
                                                 "names": ["height", "width", "channels"]}
    kwargs = {"streaming_encoding": True, "encoder_queue_maxsize": 1000} if streaming else {}
    ds = LeRobotDataset.create("bench/lerobot", FPS, features, root=out / "lerobot", use_videos=True, **kwargs)
    seconds = 0.0
    for bag in bags:
        frames = decoded(bag)
        start = time.perf_counter()
        for i in range(len(frames["front"])):
            frame = {"observation.state": np.sin(np.arange(7) + i / 30).astype(np.float32), "task": "bench"}
            frame.update({f"observation.images.{cam}": frames[cam][i] for cam in CAMERAS})
            ds.add_frame(frame)
        ds.save_episode()
        seconds += time.perf_counter() - start
    start = time.perf_counter()
    ds.finalize()
    return seconds + time.perf_counter() - start, _frames_in_videos(out / "lerobot")


def run_robokit(bags: list[Path], out: Path) -> tuple[float, int]:
    """`robokit convert --to lerobot` as a user runs it (its workers are children of this process), plus any
    arguments in $ROBOKIT_BENCH_ARGS (e.g. `--workers 1`)."""
    cmd = [sys.executable, "-c", "from robokit.cli import run; run()", "convert", *map(str, bags), "--to",
           "lerobot", "--out", str(out / "export"), "--fps", str(FPS), "--no-cache", "--quiet",
           *[f"--{k}={v}" for k, v in CODEC.items()], *os.environ.get("ROBOKIT_BENCH_ARGS", "").split()]
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - start, _frames_in_videos(out / "export" / "lerobot")


def _frames_in_videos(root: Path) -> int:
    import av

    counts = []
    for cam in CAMERAS:
        n = 0
        for f in sorted(root.glob(f"videos/*{cam}*/**/*.mp4")):
            with av.open(str(f)) as c:
                n += sum(1 for packet in c.demux(video=0) if packet.size)
        counts.append(n)
    return min(counts)


def peak_tree_rss(pid: int, stop: threading.Event) -> Iterator[int]:
    """Samples of the summed resident memory of process `pid`'s tree every 20 ms until `stop` is set."""
    try:
        proc = psutil.Process(pid)
    except psutil.Error:  # already gone
        return
    while not stop.wait(0.02):
        yield tree_rss(proc)


def child(variant: str, bags: list[Path]) -> None:
    runners: dict[str, Callable[[list[Path], Path], tuple[float, int]]] = {
        "bare": run_bare, "robokit": run_robokit,
        "lerobot": lambda b, o: run_lerobot(b, o, streaming=False),
        "lerobot-streaming": lambda b, o: run_lerobot(b, o, streaming=True),
    }
    with tempfile.TemporaryDirectory(prefix=f"bench-{variant}-") as out:
        seconds, frames = runners[variant](bags, Path(out))
    print(json.dumps({"variant": variant, "frames": frames, "seconds": seconds}))


def measure(variant: str, bags: list[Path]) -> dict[str, float]:
    """Run one variant in a fresh process; its result with the peak resident memory of its process tree."""
    proc = subprocess.Popen([sys.executable, __file__, "--child", variant, *map(str, bags)], stdout=subprocess.PIPE,
                            text=True)
    stop, peak = threading.Event(), [0]

    def sample() -> None:
        for rss in peak_tree_rss(proc.pid, stop):
            peak[0] = max(peak[0], rss)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, _ = proc.communicate()
    stop.set()
    sampler.join()
    if proc.returncode:
        raise SystemExit(f"{variant} failed with exit status {proc.returncode}")
    return {**json.loads(stdout.strip().splitlines()[-1]), "peak_mib": peak[0] / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--variants", default="bare,robokit" + (",lerobot-streaming,lerobot" if find_spec("lerobot")
                                                             else ""))
    ap.add_argument("--bags", type=Path, help="reuse (or write once) the bags in this folder")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("paths", nargs="*", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--rounds", type=int, default=5, help="run the variants this many times in turn (A B A B ...); "
                    "medians and the median of each round's ratio are printed")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, seconds: proves the script still runs")
    args = ap.parse_args()
    if args.child:
        child(args.child, args.paths)
        return
    compile_robokit()
    if args.smoke:
        args.episodes, args.seconds, args.rounds = 2, 0.2, 1
    frames = round(args.seconds * FPS)
    variants = args.variants.split(",")
    with tempfile.TemporaryDirectory(prefix="bench-bags-") as tmp:
        folder = args.bags or Path(tmp)
        bags = sorted(folder.glob("episode_*")) or write_bags(folder, args.episodes, frames)
        rounds = [{v: measure(v, bags) for v in variants} for _ in range(max(1, args.rounds))]
    expected = len(bags) * frames
    print(f"{len(bags)} episodes x {frames} frames, cameras {', '.join(f'{w}x{h}' for w, h in CAMERAS.values())}"
          f" at {FPS} Hz, libsvtav1 crf {CODEC['crf']} g {CODEC['gop']} preset {CODEC['preset']}, "
          f"{os.cpu_count()} CPUs, {len(rounds)} round(s): medians")
    print(f"{'variant':<20}{'frames/s':>10}{'vs bare':>9}{'frames in mp4':>15}{'peak MiB (all processes)':>26}")
    for v in variants:
        fps = float(np.median([expected / r[v]["seconds"] for r in rounds]))
        ratios = [r["bare"]["seconds"] / r[v]["seconds"] for r in rounds if "bare" in r]
        ratio = f"{np.median(ratios):.2f}x" if ratios else "-"
        print(f"{v:<20}{fps:>10.1f}{ratio:>9}{min(r[v]['frames'] for r in rounds):>15.0f}"
              f"{np.median([r[v]['peak_mib'] for r in rounds]):>26.0f}")
        if len(rounds) > 1 and ratios and v != "bare":
            print(f"{'':<20}rounds: {', '.join(f'{x:.2f}x' for x in ratios)}")

if __name__ == "__main__":
    main()
