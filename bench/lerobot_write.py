"""LeRobot writing speed: robokit vs lerobot's own writer vs the bare PyAV encoder, same frames and codec.

Run by hand in the conformance environment (it has both packages):
    ~/.cache/robokit/conformance-py312/bin/python bench/lerobot_write.py [--episodes 10 --frames 300]
Each variant runs in its own process so peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from importlib.util import find_spec
from pathlib import Path

import numpy as np

W, H, FPS, CAMERAS = 640, 480, 30, ("front", "wrist")
CODEC = {"crf": 30, "gop": 2, "preset": 12}


def pixels(ep: int, i: int, cam: int) -> np.ndarray:
    """A cheap, deterministic frame with texture and motion (so the encoder does real work)."""
    y, x = np.ogrid[0:H, 0:W]
    img = np.empty((H, W, 3), dtype=np.uint8)
    img[..., 0] = (x + 3 * i + 40 * cam) % 256
    img[..., 1] = (y + 2 * i + 17 * ep) % 256
    img[..., 2] = ((x // 16 + y // 16 + i) % 2) * 200
    return img


class _Generated:
    """FrameSource producing frames on demand (nothing held in memory)."""

    def __init__(self, ep: int, cam: int) -> None:
        self.ep, self.cam = ep, cam

    def iter_frames(self, positions: Sequence[int]) -> Iterator[object]:
        from robokit.timeline import Frame

        for p in positions:
            yield Frame("raw", pixels=pixels(self.ep, int(p), self.cam))


def run_robokit(out: Path, episodes: int, frames: int) -> int:
    from robokit.converters import get_converter
    from robokit.converters.options import WriterOptions
    from robokit.timeline import Episode, EpisodeMeta, EventStream, ImageStream, NumericStream

    t = (np.arange(frames) * (1e9 / FPS)).round().astype(np.int64)
    eps = []
    for e in range(episodes):
        state = np.random.default_rng(e).normal(size=(frames, 6))
        streams = {
            "joints/position": NumericStream("joints/position", t, values=state),
            "task": EventStream("task", t[:1], values=("bench",)),
        }
        for c, cam in enumerate(CAMERAS):
            streams[f"{cam}/rgb"] = ImageStream(f"{cam}/rgb", t, source=_Generated(e, c), width=W, height=H)
        eps.append(Episode(EpisodeMeta(f"bench://{e}", f"ep{e}"), streams))
    get_converter("lerobot").write(eps, out, WriterOptions(fps=FPS, action="joints/position_delta",
                                                                extra={**CODEC, "preset": str(CODEC["preset"])}))
    return episodes * frames


def run_lerobot(out: Path, episodes: int, frames: int, streaming: bool) -> int:
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    features = {
        "observation.state": {"dtype": "float32", "shape": (6,), "names": None},
        "action": {"dtype": "float32", "shape": (6,), "names": None},
    }
    for cam in CAMERAS:
        features[f"observation.images.{cam}"] = {
            "dtype": "video",
            "shape": (H, W, 3),
            "names": ["height", "width", "channels"],
        }
    kwargs = {"streaming_encoding": True, "encoder_queue_maxsize": frames} if streaming else {}
    ds = LeRobotDataset.create("bench/lerobot", FPS, features, root=out / "lerobot", use_videos=True, **kwargs)
    for e in range(episodes):
        state = np.random.default_rng(e).normal(size=(frames, 6)).astype(np.float32)
        for i in range(frames):
            frame = {"observation.state": state[i], "action": state[min(i + 1, frames - 1)] - state[i], "task": "bench"}
            for c, cam in enumerate(CAMERAS):
                frame[f"observation.images.{cam}"] = pixels(e, i, c)
            ds.add_frame(frame)
        ds.save_episode()
    ds.finalize()
    return _frames_in_videos(out / "lerobot")


def run_bare(out: Path, episodes: int, frames: int) -> int:
    """The physical limit: PyAV encoding the same frames with the same settings, one thread per camera."""
    from concurrent.futures import ThreadPoolExecutor

    from robokit.converters.video import VideoEncoder, VideoSettings

    def encode(c: int) -> int:
        enc = VideoEncoder(out / f"{c}.mp4", W, H, FPS, VideoSettings(**CODEC))
        for e in range(episodes):
            for i in range(frames):
                enc.add(pixels(e, i, c))
        enc.close()
        return enc.frames

    out.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(len(CAMERAS)) as pool:
        return sum(pool.map(encode, range(len(CAMERAS)))) // len(CAMERAS)


def _frames_in_videos(root: Path) -> int:
    import av

    counts = []
    for cam in CAMERAS:
        n = 0
        for f in sorted((root / "videos" / f"observation.images.{cam}").rglob("*.mp4")):
            with av.open(str(f)) as c:
                n += sum(1 for packet in c.demux(video=0) if packet.size)
        counts.append(n)
    return min(counts)


def child(variant: str, episodes: int, frames: int) -> None:
    out = Path(tempfile.mkdtemp(prefix=f"bench-{variant}-"))
    try:
        start = time.perf_counter()
        if variant == "robokit":
            n = run_robokit(out, episodes, frames)
        elif variant == "bare":
            n = run_bare(out, episodes, frames)
        else:
            n = run_lerobot(out, episodes, frames, streaming=variant == "lerobot-streaming")
        seconds = time.perf_counter() - start
    finally:
        shutil.rmtree(out, ignore_errors=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"variant": variant, "frames": n, "seconds": seconds, "peak_rss_mb": rss}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--episodes", type=int, default=10)
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--variants", default="bare,robokit,lerobot-streaming,lerobot")
    ap.add_argument("--child")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, seconds: proves the script still runs")
    args = ap.parse_args()
    if args.smoke:  # lerobot is only in the conformance environment: its variants run where it is
        args.episodes, args.frames = 1, 4
        args.variants = "bare,robokit" + (",lerobot-streaming,lerobot" if find_spec("lerobot") else "")
    if args.child:
        child(args.child, args.episodes, args.frames)
        return
    expected = args.episodes * args.frames
    rows = []
    for variant in args.variants.split(","):
        cmd = [
            sys.executable,
            __file__,
            "--child",
            variant,
            "--episodes",
            str(args.episodes),
            "--frames",
            str(args.frames),
        ]
        res = subprocess.run(cmd, capture_output=True, text=True, check=True)
        rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
    base = {r["variant"]: expected / r["seconds"] for r in rows}
    print(
        f"{args.episodes} episodes x {args.frames} frames x {len(CAMERAS)} cameras at {W}x{H}, "
        f"libsvtav1 crf {CODEC['crf']} g {CODEC['gop']} preset {CODEC['preset']}"
    )
    print(f"{'variant':<20}{'frames/s':>10}{'vs robokit':>12}{'frames in mp4':>15}{'peak RSS MB':>13}")
    for r in rows:
        fps = expected / r["seconds"]
        ratio = base.get("robokit", fps) / fps
        print(f"{r['variant']:<20}{fps:>10.1f}{ratio:>11.2f}x{r['frames']:>15}{r['peak_rss_mb']:>13.0f}")


if __name__ == "__main__":
    main()
