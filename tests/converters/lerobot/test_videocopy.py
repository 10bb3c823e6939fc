"""Coded video into LeRobot: packets copied when nothing needs pixels, else re-encoded with the reason told."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import av
import numpy as np
import pyarrow.parquet as pq
import pytest

import robokit
from robokit.converters import get_converter, videocopy
from robokit.converters.options import WriterOptions
from robokit.converters.registry import WriteResult
from robokit.converters.videocopy import Mp4Video
from robokit.ros.bagwriter import START_NS
from robokit.samples.videobag import coded_slices, encode, frame_index, write_video_bag
from robokit.timeline import Episode

KEY = "observation.images.front"
SIZE = (160, 96)


def _bag(tmp_path: Path, name: str = "bag", **kwargs: Any) -> Path:
    return write_video_bag(tmp_path / name, width=SIZE[0], height=SIZE[1], **kwargs)


def _write(episodes: list[Episode], out: Path, options: WriterOptions | None = None) -> WriteResult:
    return get_converter("lerobot").write(episodes, out, options or WriterOptions())


def _videos(root: Path) -> list[Path]:
    return sorted((root / "videos").rglob("*.mp4"))


def _decoded_indices(path: Path) -> list[int]:
    with av.open(str(path)) as container:
        return [frame_index(f.to_ndarray(format="rgb24")) for f in container.decode(container.streams.video[0])]


def _copy_notes(result: WriteResult) -> list[str]:
    return [w for w in result.warnings if "re-encoded, not copied" in w]


def _packets(path: Path) -> list[bytes]:
    with av.open(str(path)) as container:
        return [bytes(p) for p in container.demux(container.streams.video[0]) if p.size]


@pytest.mark.parametrize("part_bytes", [videocopy.PART_BYTES, 1])  # 1: every keyframe starts a part of its own
def test_compressed_video_is_copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, part_bytes: int) -> None:
    monkeypatch.setattr(videocopy, "PART_BYTES", part_bytes)
    episodes = robokit.open([_bag(tmp_path, "a", frames=70), _bag(tmp_path, "b", frames=65)])
    result = _write(episodes, tmp_path / "out")
    assert not _copy_notes(result) and result.episodes == 2
    root = tmp_path / "out" / "lerobot"
    info = json.loads((root / "meta" / "info.json").read_text())["features"][KEY]["info"]
    assert (info["video.codec"], info["video.g"], info["video.crf"], info["video.fps"]) == ("h264", 30, None, 30)
    (mp4,) = _videos(root)
    recorded = [coded_slices(data, "h264") for data, _ in encode(70, *SIZE, 30)][:69]
    recorded += [coded_slices(data, "h264") for data, _ in encode(65, *SIZE, 30)][:64]
    copied = [coded_slices(p.data, "h264") for p in Mp4Video(mp4, 0.0).packets(range(133))]
    assert copied == recorded  # the recorded slices, bit for bit
    assert _decoded_indices(mp4) == list(range(69)) + list(range(64))
    table = pq.read_table(next((root / "meta" / "episodes").rglob("*.parquet"))).to_pylist()
    assert [(r[f"videos/{KEY}/from_timestamp"], r[f"videos/{KEY}/to_timestamp"]) for r in table] == \
        [(0.0, 69 / 30), (69 / 30, 133 / 30)]
    assert get_converter("lerobot").check(root) == []


@pytest.mark.parametrize(("why", "kwargs", "options", "expected"), [
    ("B-frames", {"bframes": 2}, WriterOptions(), list(range(39))),
    ("frame rate changes", {}, WriterOptions(fps=15), list(range(0, 40, 2))),
    ("resized", {}, WriterOptions(image_size=(80, 48)), None),
    ("codec av1 asked for", {}, WriterOptions(extra={"codec": "av1"}), list(range(39))),
])
def test_falls_back_to_encoding_and_says_why(tmp_path: Path, why: str, kwargs: dict[str, Any],
                                              options: WriterOptions, expected: list[int] | None) -> None:
    result = _write(robokit.open(_bag(tmp_path, frames=40, **kwargs)), tmp_path / "out", options)
    (note,) = _copy_notes(result)
    assert why in note
    (mp4,) = _videos(tmp_path / "out" / "lerobot")
    if expected is not None:
        assert _decoded_indices(mp4) == expected


def test_episode_starting_between_keyframes_is_re_encoded(tmp_path: Path) -> None:
    (ep,) = robokit.open(_bag(tmp_path, frames=70))
    period = round(1e9 / 30)
    mid, on_key = ep.crop(START_NS + 10 * period, START_NS + 50 * period), ep.crop(START_NS + 30 * period,
                                                                                      START_NS + 69 * period)
    result = _write([mid], tmp_path / "mid")
    assert "between keyframes" in _copy_notes(result)[0]
    assert _decoded_indices(_videos(tmp_path / "mid" / "lerobot")[0])[:3] == [10, 11, 12]
    result = _write([on_key], tmp_path / "key")
    assert not _copy_notes(result)
    assert _decoded_indices(_videos(tmp_path / "key" / "lerobot")[0])[:3] == [30, 31, 32]


@pytest.mark.parametrize("damage", [0, 12, 30])  # the first keyframe, a P-frame, a later keyframe
def test_damaged_packet_does_not_sink_the_export(tmp_path: Path, damage: int) -> None:
    episodes = robokit.open([_bag(tmp_path, "a", frames=40, damage=damage), _bag(tmp_path, "b", frames=40)])
    result = _write(episodes, tmp_path / "out")
    assert result.episodes + len(result.skipped) == 2 and result.episodes >= 1
    if damage == 30:  # a keyframe after the first: copied as recorded, and said so
        assert any("1 sampled keyframe(s) do not decode" in w for w in result.warnings), result.warnings


def test_av1_lerobot_dataset_is_re_exported_without_re_encoding(lerobot_root: Path, tmp_path: Path) -> None:
    options = WriterOptions(fps=15)
    result = _write(robokit.open(lerobot_root), tmp_path / "out", options)
    assert not _copy_notes(result)
    out = tmp_path / "out" / "lerobot"
    for key in ("observation.images.front", "observation.images.wrist"):
        (src,) = [p for p in _videos(lerobot_root) if key in str(p)]
        (dst,) = [p for p in _videos(out) if key in str(p)]
        assert _packets(dst) == _packets(src)  # every packet copied as it was
        info = json.loads((out / "meta" / "info.json").read_text())["features"][key]["info"]
        assert info["video.codec"] == "av1"
    source = pq.read_table(next((lerobot_root / "data").rglob("*.parquet")))
    copied = pq.read_table(next((out / "data").rglob("*.parquet")))
    for column in ("observation.state", "timestamp", "frame_index", "episode_index"):
        assert copied[column].to_pylist() == source[column].to_pylist()


def test_several_lerobot_datasets_merge_without_re_encoding(lerobot_root: Path, tmp_path: Path) -> None:
    episodes = [*robokit.open(lerobot_root), *robokit.open(lerobot_root)]
    result = _write(episodes, tmp_path / "out", WriterOptions(fps=15))
    assert not _copy_notes(result) and result.episodes == 4
    front = [p for p in _videos(tmp_path / "out" / "lerobot") if "front" in str(p)]
    (src,) = [p for p in _videos(lerobot_root) if "front" in str(p)]
    assert len(front) == 1 and _packets(front[0]) == _packets(src) * 2


def test_copied_and_encoded_episodes_go_to_separate_files(tmp_path: Path) -> None:
    copied = robokit.open(_bag(tmp_path, "a", frames=40))
    encoded = robokit.open(_bag(tmp_path, "b", frames=40, bframes=2))
    result = _write([*copied, *encoded], tmp_path / "out")
    assert result.episodes == 2 and len(_copy_notes(result)) == 1
    first, second = _videos(tmp_path / "out" / "lerobot")
    assert _decoded_indices(first) == list(range(39)) and _decoded_indices(second) == list(range(39))


@pytest.mark.conformance
def test_lerobot_decodes_copied_video_at_its_timestamps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("lerobot")
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    monkeypatch.setattr(videocopy, "PART_BYTES", 1)  # copied in parts of one GOP, joined
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    episodes = robokit.open([_bag(tmp_path, "a", frames=70), _bag(tmp_path, "b", frames=65)])
    assert not _copy_notes(_write(episodes, tmp_path / "out"))
    ds = LeRobotDataset("robokit/video", root=tmp_path / "out" / "lerobot")
    for index in (0, 31, 68, 69, 100, 132):
        item = ds[index]
        pixels = (item[KEY].numpy().transpose(1, 2, 0) * 255).round().astype(np.uint8)
        assert frame_index(pixels) == int(item["frame_index"])



def test_mp4_copy_problems_are_found_in_one_pass(tmp_path: Path) -> None:
    """A LeRobot episode's MP4 as a copy source: whole, cut between keyframes, short of frames, with B-frames."""
    _write(robokit.open(_bag(tmp_path, frames=70)), tmp_path / "out")
    (mp4,) = _videos(tmp_path / "out" / "lerobot")
    video = Mp4Video(mp4, 0.0)
    assert video.copy_problem(range(69)) == "" and video.copy_problem(range(30, 60)) == ""
    assert video.copy_problem(range(10, 40)) == "the episode starts between keyframes"
    assert video.copy_problem(range(80)) == "the video file holds 69 of the episode's 80 frames"
    with av.open(str(tmp_path / "b.mp4"), mode="w") as out:
        stream = out.add_stream("libx264", rate=30, options={"x264-params": "bframes=2:keyint=30"})
        stream.width, stream.height, stream.pix_fmt = *SIZE, "yuv420p"
        for i in [*range(20), None]:
            frame = None if i is None else av.VideoFrame.from_ndarray(np.full((SIZE[1], SIZE[0], 3), i * 9, np.uint8),
                                                                       format="rgb24")
            if frame is not None:
                frame.pts = i
            for packet in stream.encode(frame):
                out.mux(packet)
    assert "B-frames" in Mp4Video(tmp_path / "b.mp4", 0.0).copy_problem(range(20))
