"""Per-step image writers (RLDS, WebDataset) pick each camera's encoding from how it was recorded."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import numpy as np
import pytest

import robokit
from robokit.converters import get_converter
from robokit.converters.images import camera_specs, recorded_format
from robokit.converters.options import WriterOptions
from robokit.converters.prepare import prepare
from robokit.timeline import ImageStream, StreamOrigin
from tests.converters.conftest import MakeEpisode


@pytest.fixture()
def from_video(make_episode: MakeEpisode, tmp_path: Path) -> Path:
    """A LeRobot dataset (cameras as MP4) written from a 10-frame in-memory episode."""
    episode = make_episode("v0", shapes=[(16, 12)] * 10)
    get_converter("lerobot").write([episode], tmp_path / "video", WriterOptions(extra={"codec": "h264"}))
    return tmp_path / "video" / "lerobot"


def test_recorded_format() -> None:
    video = ImageStream("cam/rgb", np.zeros(0, np.int64), origin=StreamOrigin("observation.images.cam",
                                                                                "lerobot/video"))
    assert recorded_format(video) == "video"
    raw = ImageStream("cam/rgb", np.zeros(0, np.int64), origin=StreamOrigin("/cam", "sensor_msgs/msg/Image"))
    assert recorded_format(raw) == "raw"
    assert recorded_format(ImageStream("cam/rgb", np.zeros(0, np.int64), format="png")) == "png"


@pytest.mark.parametrize(("requested", "video_format", "raw_format"), [
    ("auto", "jpeg", "png"), ("png", "png", "png"), ("jpeg", "jpeg", "jpeg")])
def test_video_sources_default_to_jpeg_lossless_ones_to_png(from_video: Path, make_episode: MakeEpisode,
                                                            requested: str, video_format: str, raw_format: str) -> None:
    (decoded,) = robokit.open(from_video)
    options = WriterOptions()
    ((_, video_spec),) = camera_specs(prepare(decoded, options), requested).values()
    ((_, raw_spec),) = camera_specs(prepare(make_episode("raw"), options), requested).values()
    assert (video_spec.format, raw_spec.format) == (video_format, raw_format)


def test_lerobot_to_rlds_and_webdataset_stores_jpeg(from_video: Path, tmp_path: Path) -> None:
    episodes = robokit.open(from_video)
    for fmt in ("rlds", "webdataset"):
        get_converter(fmt).write(episodes, tmp_path, WriterOptions(action="joints/position_delta"))
    (features,) = (tmp_path / "rlds").rglob("features.json")
    camera = json.loads(features.read_text())["featuresDict"]["features"]["steps"]["sequence"]["feature"][
        "featuresDict"]["features"]["observation"]["featuresDict"]["features"]["cam"]
    assert camera["image"]["encodingFormat"] == "jpeg"
    (shard,) = (tmp_path / "webdataset").glob("*.tar")
    with tarfile.open(shard) as tar:
        names = tar.getnames()
    assert any(n.endswith(".jpg") for n in names) and not any(n.endswith(".png") for n in names)


def test_frames_are_encoded_in_threads_in_order_a_repeated_frame_once() -> None:
    """`in_order` keeps the stream's order while threads encode ahead; a frame repeated by resampling (the same
    position again) is encoded once; an encoding error reaches the caller at its frame."""
    from concurrent.futures import ThreadPoolExecutor

    from robokit.converters.images import in_order
    from robokit.timeline.images import ArrayFrameSource

    pixels = np.arange(6, dtype=np.uint8).reshape(6, 1, 1, 1).repeat(3, axis=3)
    positions = [0, 1, 1, 1, 2, 3, 4, 5, 5, 0]
    stream = ImageStream("cam/rgb", np.arange(len(positions), dtype=np.int64), source=ArrayFrameSource(pixels),
                         positions=np.array(positions))
    calls: list[int] = []

    def encode(index: int, frame: robokit.timeline.Frame) -> int:
        calls.append(index)
        return int(frame.array()[0, 0, 0])

    with ThreadPoolExecutor(max_workers=2) as pool:
        assert list(in_order(stream, encode, pool)) == positions
    assert sorted(calls) == [0, 1, 4, 5, 6, 7, 9]

    def failing(index: int, frame: robokit.timeline.Frame) -> int:
        if index == 5:
            raise ValueError("frame 5")
        return index

    with ThreadPoolExecutor(max_workers=2) as pool:
        out = in_order(stream, failing, pool)
        assert [next(out) for _ in range(5)] == [0, 1, 1, 1, 4]
        with pytest.raises(ValueError, match="frame 5"):
            next(out)
