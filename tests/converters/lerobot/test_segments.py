"""A camera encoded as GOP-aligned segments in parallel reads back like one encoder's video."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import av
import numpy as np
import pyarrow.parquet as pq
import pytest

import robokit
from robokit.converters import get_converter
from robokit.converters.lerobot import videos
from robokit.converters.lerobot.videos import segments
from robokit.converters.options import WriterOptions
from robokit.timeline import ImageStream


@pytest.mark.parametrize(("n", "gop", "expected"), [
    (0, 2, [(0, 0)]),
    (40, 2, [(0, 40)]),
    (300, 2, [(0, 150), (150, 300)]),
    (301, 2, [(0, 150), (150, 300), (300, 301)]),
    (300, 40, [(0, 160), (160, 300)]),  # a multiple of the GOP: keyframes stay where one encoder puts them
    (300, 1000, [(0, 300)]),
])
def test_segments_are_gop_aligned_and_cover_the_camera(n: int, gop: int, expected: list[tuple[int, int]]) -> None:
    assert segments(n, gop) == expected


def test_a_long_camera_is_cut_in_bounded_segments() -> None:
    spans = segments(108_000, 2)  # an hour at 30 Hz
    assert len(spans) == 720 and {b - a for a, b in spans} == {150}
    assert spans[0][0] == 0 and spans[-1][1] == 108_000
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))


@pytest.mark.parametrize("codec", ["av1", "h264"])
def test_segmented_cameras_read_back_like_one_encoder(sample_dir: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch, codec: str) -> None:
    options = WriterOptions(fps=15, extra={"codec": codec})
    episodes = robokit.open(sorted(sample_dir.iterdir()))
    get_converter("lerobot").write(episodes, tmp_path / "whole", options)
    monkeypatch.setattr(videos, "SEGMENT_FRAMES", 8)  # 45 frames per camera: 6 segments
    assert len(segments(45, 2)) == 6
    get_converter("lerobot").write(episodes, tmp_path / "cut", options)
    whole, cut = tmp_path / "whole" / "lerobot", tmp_path / "cut" / "lerobot"

    assert json.loads((whole / "meta/info.json").read_text()) == json.loads((cut / "meta/info.json").read_text())
    table = "meta/episodes/chunk-000/file-000.parquet"
    timing = [c for c in pq.read_schema(whole / table).names if c.endswith(("_timestamp", "file_index"))]
    assert pq.read_table(whole / table, columns=timing).equals(pq.read_table(cut / table, columns=timing))
    image_stats = [c for c in pq.read_schema(whole / table).names if c.startswith("stats/observation.images.")]
    assert image_stats and pq.read_table(whole / table, columns=image_stats).equals(
        pq.read_table(cut / table, columns=image_stats))  # counted by segments, the same frames
    for mp4 in sorted(whole.rglob("*.mp4")):
        with av.open(str(mp4)) as a, av.open(str(cut / mp4.relative_to(whole))) as b:
            pts = [[f.pts for f in c.decode(video=0)] for c in (a, b)]
            assert pts[0] == pts[1]
            assert len(set(np.diff(pts[0]))) == 1  # every frame, in order, no gap or overlap at a cut
    for one, other in zip(robokit.open(whole), robokit.open(cut), strict=True):
        for i in range(len(one["front/rgb"])):
            a, b = (e["front/rgb"].frame(i).array().astype(np.float64) for e in (one, other))
            psnr = 10 * np.log10(255**2 / max(float(np.mean((a - b) ** 2)), 1e-9))
            assert psnr > 35, f"frame {i}: PSNR {psnr:.1f} dB between one encoder and segments"


def test_a_cameras_segments_count_into_one_statistics(sample_bag: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """One count per camera, not one per segment held to the episode's end (512 KiB each for depth)."""
    made: list[int] = []

    class Counted(videos.ImageStats):
        def __init__(self) -> None:
            made.append(1)
            super().__init__()

    monkeypatch.setattr(videos, "ImageStats", Counted)
    monkeypatch.setattr(videos, "SEGMENT_FRAMES", 4)
    (episode,) = robokit.open(sample_bag)
    get_converter("lerobot").write([episode], tmp_path, WriterOptions(fps=15))
    cameras = [s for s in episode.streams.values() if isinstance(s, ImageStream)]
    assert len(cameras) >= 2 and len(made) == len(cameras)


def test_a_failed_segment_stops_the_episode_without_encoding_the_rest(sample_bag: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    import time

    from robokit.errors import RobokitError, SourceError

    monkeypatch.setattr(videos, "SEGMENT_FRAMES", 4)
    started: list[int] = []
    lock = threading.Lock()

    def failing(stream: object, start: int, *args: object) -> videos.Video:
        with lock:
            started.append(start)
        if start == 0:
            raise SourceError("frame 0 cannot be decoded")
        time.sleep(0.2)
        raise AssertionError("never reached: the episode has failed")

    monkeypatch.setattr(videos, "_encoded", failing)
    (episode,) = robokit.open(sample_bag)
    with pytest.raises(RobokitError, match="frame 0"):
        get_converter("lerobot").write([episode], tmp_path, WriterOptions(fps=15))
    assert len(started) < 4  # of 12 segments: the ones already running finish, the others are cancelled
