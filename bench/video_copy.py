"""Coded video copied, not re-encoded: CompressedVideo bags → LeRobot + MCAP, and LeRobot → LeRobot.

Run by hand: `.venv/bin/python bench/video_copy.py [--episodes 3] [--seconds 10] [--size 640x480]`
(`--smoke`: tiny sizes, proves the script runs). Writes `--episodes` ROS 2 bags of foxglove_msgs
CompressedVideo (H.264, 30 fps, a keyframe a second, no B-frames), then in one run measures the bare PyAV
encoder (libsvtav1, crf 30, g 2, preset 12: LeRobot's settings) on the first episode's frames, robokit's
export of the bags to lerobot + mcap, and a re-export of that LeRobot dataset, all with `use_cache=False`;
and checks the coded slices written are the recorded ones. Target: each export ≥ 10x the bare encoder's
frames/s. An untimed export first takes imports and first-use costs out of the timings.
Measured on a shared, loaded 2-core machine (3 × 10 s at 640x480): bare encoder 255 frames/s; bags → lerobot
6589 frames/s (26x), bags → lerobot + mcap 4152 (16x), lerobot → lerobot 7366 (29x); every coded slice identical.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np

import robokit
from robokit.converters.videocopy import coded
from robokit.export import export
from robokit.samples.videobag import coded_slices, write_video_bag
from robokit.timeline import ImageStream

FPS = 30
BARE_FRAMES = 150  # frames held in memory for the bare encoder


def bare_encoder(frames: list[np.ndarray], out: Path) -> float:
    """Seconds the bare PyAV encoder takes on `frames` (LeRobot's libsvtav1 settings), muxing included."""
    height, width = frames[0].shape[:2]
    t0 = time.perf_counter()
    with av.open(str(out), mode="w", format="mp4") as container:
        stream: Any = container.add_stream("libsvtav1", rate=FPS, options={"g": "2", "crf": "30", "preset": "12"})
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for i, pixels in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, FPS)
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return time.perf_counter() - t0


def episode_slices(sources: list[Path]) -> list[list[list[bytes]]]:
    """Per episode, every frame's H.264 slices as robokit reads them (a bag's packets, a LeRobot episode's MP4
    samples)."""
    out = []
    for ep in robokit.open(sources):
        stream = ep["front/rgb"]
        assert isinstance(stream, ImageStream)
        video = coded(stream.source)
        assert video is not None, "the camera is coded video"
        out.append([coded_slices(p.data, "h264") for p in video.packets(stream.positions.tolist())])
    return out


def timed(label: str, sources: list[Path], formats: list[str], dest: Path, frames_per_s: float) -> float:
    t0 = time.perf_counter()
    job = export(sources, formats, dest, {}, use_cache=False)
    wall = time.perf_counter() - t0
    frames = job.formats[formats[0]].frames
    rate = frames / wall
    print(f"{label}: {frames} frames in {wall:.2f} s: {rate:.0f} frames/s, {rate / frames_per_s:.1f}x the bare encoder")
    return rate / frames_per_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--size", default="640x480")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, seconds: proves the script still runs")
    args = parser.parse_args()
    if args.smoke:
        args.episodes, args.seconds, args.size = 2, 2.0, "160x96"
    width, height = (int(v) for v in args.size.split("x"))
    frames = round(args.seconds * FPS)
    work = Path(tempfile.mkdtemp(prefix="robokit-bench-video-copy-"))
    try:
        bags = [write_video_bag(work / f"ep{i}", frames=frames, width=width, height=height, fps=FPS)
                for i in range(args.episodes)]
        (first,) = robokit.open(bags[0])
        camera = first["front/rgb"]
        assert isinstance(camera, ImageStream)
        pixels = [f.array() for f in camera.frames(range(min(BARE_FRAMES, len(camera))))]
        bare = len(pixels) / bare_encoder(pixels, work / "bare.mp4")
        print(f"{args.episodes} episodes of {args.seconds:g} s at {width}x{height} {FPS} fps (H.264, g {FPS})")
        print(f"bare PyAV encoder (libsvtav1 crf 30 g 2 preset 12): {bare:.0f} frames/s")
        export(bags[:1], ["lerobot", "mcap"], work / "warm-up", {}, use_cache=False)  # imports, first use: not timed
        speedups = [timed("bags → lerobot", bags, ["lerobot"], work / "lerobot-only", bare),
                    timed("bags → lerobot + mcap", bags, ["lerobot", "mcap"], work / "out", bare),
                    timed("lerobot → lerobot", [work / "out" / "lerobot"], ["lerobot"], work / "again", bare)]
        recorded = episode_slices(bags)
        outputs = {"bags → lerobot": [work / "out" / "lerobot"], "bags → mcap": sorted((work / "out" / "mcap").glob(
            "*.mcap")), "lerobot → lerobot": [work / "again" / "lerobot"]}
        for label, paths in outputs.items():
            written = episode_slices(paths)
            same = [w == r[:len(w)] for w, r in zip(written, recorded, strict=True)]
            print(f"{label}: {sum(same)} of {len(written)} episodes' coded slices identical to the recorded ones "
                  f"({sum(len(w) for w in written)} frames)")
            assert all(same), "coded slices differ from the recording"
        print(f"target ≥ 10x: {'met' if min(speedups) >= 10 else 'NOT met'} ({min(speedups):.1f}x)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
