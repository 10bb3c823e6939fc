"""Depth (16UC1, 32FC1, compressedDepth PNG/RVL) through every writer: millimetres exact in PNG and MCAP,
within 1 % in LeRobot's quantized depth video; never 8-bit or 3-channel."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

import robokit
from robokit.converters.lerobot.depth import dequantize, quantize
from robokit.export.job import NothingConverted, export
from robokit.samples.depthbag import FRAMES, HEIGHT, WIDTH, write_depth_bag
from robokit.timeline import ImageStream
from robokit.timeline.depth import millimetre_stream, to_millimetres

CAMERAS = ("back", "front", "side", "top", "wrist")
FORMATS = ("lerobot", "rlds", "webdataset", "mcap", "viam-binary")


@pytest.fixture(scope="module")
def depth_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_depth_bag(tmp_path_factory.mktemp("depth") / "bag")


@pytest.fixture(scope="module")
def expected(depth_bag: Path) -> dict[str, list[np.ndarray]]:
    """Each camera's frames in millimetres, as read from the bag."""
    episode = robokit.open(depth_bag)[0]
    out = {}
    for cam in CAMERAS:
        stream = episode.streams[f"{cam}/depth"]
        assert isinstance(stream, ImageStream)
        out[cam] = [f.array() for f in millimetre_stream(stream).frames()]
    return out


@pytest.fixture(scope="module")
def exported(depth_bag: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("depth-out")
    job = export([depth_bag], FORMATS, out, {"fps": 10}, use_cache=False)
    assert job.status == "done", job.warnings
    return out


def test_to_millimetres_rounds_metres_and_marks_no_reading() -> None:
    metres = np.array([[0.2504, np.nan, -1.0], [np.inf, 70.0, 1.0]], dtype=np.float32)
    assert to_millimetres(metres).tolist() == [[250, 0, 0], [0, 0, 1000]]
    mm = np.array([[1, 2]], dtype=np.uint16)
    assert to_millimetres(mm) is mm


def test_quantizer_is_within_one_percent_from_ten_centimetres() -> None:
    mm = np.arange(100, 10_001, dtype=np.uint16)
    back = dequantize(quantize(mm))
    assert np.all(np.abs(back - mm) <= 0.01 * mm)
    assert dequantize(quantize(np.zeros(1, np.uint16)))[0] == 0  # no reading stays no reading


def test_lerobot_writes_quantized_depth_video(exported: Path, expected: dict[str, list[np.ndarray]]) -> None:
    root = exported / "lerobot"
    features = json.loads((root / "meta" / "info.json").read_text())["features"]
    stats = json.loads((root / "meta" / "stats.json").read_text())
    for cam in CAMERAS:
        key = f"observation.images.{cam}_depth"
        feature = features[key]
        info = feature["info"]
        assert feature["dtype"] == "video" and feature["shape"] == [HEIGHT, WIDTH, 1]
        assert info["is_depth_map"] is True and info["depth_unit"] == "mm"
        assert (info["video.codec"], info["video.pix_fmt"], info["video.channels"]) == ("hevc", "gray12le", 1)
        assert {"video.depth_min", "video.depth_max", "video.shift", "video.use_log"} <= set(info)
        assert stats[key]["max"] == [[[float(max(f.max() for f in expected[cam]))]]]  # millimetres
        with av.open(str(next((root / "videos" / key).rglob("*.mp4")))) as container:
            codes = [f.to_ndarray(format="gray12le") for f in container.decode(container.streams.video[0])]
        assert len(codes) == FRAMES
        for got, want in zip(codes, expected[cam], strict=True):
            mm = dequantize(got)
            assert np.array_equal(mm == 0, want == 0)
            assert np.all(np.abs(mm - want) <= 0.01 * want)


def test_rlds_stores_uint16_png(exported: Path, expected: dict[str, list[np.ndarray]]) -> None:
    root = next((exported / "rlds").rglob("features.json")).parent
    text = (root / "features.json").read_text()
    assert '"dtype": "uint16"' in text
    episode = robokit.open(root)[0]
    for cam in CAMERAS:
        stream = episode.streams[f"{cam}/depth"]
        assert isinstance(stream, ImageStream)
        got = [f.array() for f in stream.frames()]
        assert all(g.dtype == np.uint16 for g in got)
        assert all(np.array_equal(g, w) for g, w in zip(got, expected[cam], strict=True))


def test_webdataset_stores_uint16_png(exported: Path, expected: dict[str, list[np.ndarray]]) -> None:
    with tarfile.open(next((exported / "webdataset").glob("*.tar"))) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
    for cam in CAMERAS:
        for t in range(FRAMES):
            with Image.open(io.BytesIO(members[f"bag_{t:06d}.{cam}_depth.png"])) as im:
                assert im.mode.startswith("I;16")
                assert np.array_equal(np.asarray(im), expected[cam][t])


def test_mcap_writes_raw_16uc1(exported: Path, expected: dict[str, list[np.ndarray]]) -> None:
    from mcap.reader import make_reader

    path = next((exported / "mcap").glob("*.mcap"))
    with path.open("rb") as f:
        summary = make_reader(f).get_summary()
    assert summary is not None
    schemas = {summary.schemas[c.schema_id].name for c in summary.channels.values() if "depth" in c.topic}
    assert schemas == {"foxglove.RawImage", "foxglove.CameraCalibration"}
    episode = robokit.open(path)[0]
    for cam in CAMERAS:
        stream = episode.streams[f"{cam}/depth"]
        assert isinstance(stream, ImageStream) and stream.encoding == "16UC1"
        assert all(np.array_equal(f.array(), w) for f, w in zip(stream.frames(), expected[cam], strict=True))


def test_viam_stores_uint16_png(exported: Path, expected: dict[str, list[np.ndarray]]) -> None:
    episode = robokit.open(exported / "viam-binary")[0]
    for cam in CAMERAS:
        stream = episode.streams[f"{cam}/depth"]
        assert isinstance(stream, ImageStream) and stream.is_depth
        assert all(np.array_equal(f.array(), w) for f, w in zip(stream.frames(), expected[cam], strict=True))


def test_resize_is_nearest(depth_bag: Path, tmp_path: Path) -> None:
    job = export([depth_bag], ["webdataset"], tmp_path, {"fps": 10, "image_size": (12, 8), "cameras": ["wrist/depth"]},
                 use_cache=False)
    assert job.status == "done"
    source = robokit.open(depth_bag)[0].streams["wrist/depth"]
    assert isinstance(source, ImageStream)
    values = set(np.unique(millimetre_stream(source).frame(0).array()).tolist())
    with tarfile.open(next((tmp_path / "webdataset").glob("*.tar"))) as tar:
        data = tar.extractfile("bag_000000.wrist_depth.png").read()  # type: ignore[union-attr]
    resized = np.asarray(Image.open(io.BytesIO(data)))
    assert resized.shape == (8, 12) and set(np.unique(resized).tolist()) <= values  # no value invented


def test_lerobot_leaves_out_depth_smaller_than_hevc_encodes(depth_bag: Path, tmp_path: Path) -> None:
    job = export([depth_bag], ["lerobot"], tmp_path / "a", {"fps": 10, "image_size": (12, 8)}, use_cache=False)
    assert job.status == "done" and any("camera front/depth left out (12x8 depth" in w for w in job.warnings)
    features = json.loads((tmp_path / "a" / "lerobot" / "meta" / "info.json").read_text())["features"]
    assert not any("depth" in key for key in features)
    with pytest.raises(NothingConverted, match="needs at least 16x16"):
        export([depth_bag], ["lerobot"], tmp_path / "b", {"fps": 10, "image_size": (12, 8), "cameras": ["front/depth"]},
               use_cache=False)


def test_reasoning_sets_leave_depth_out_with_a_warning(depth_bag: Path, tmp_path: Path) -> None:
    import shutil

    from robokit.samples.completed_scene import write_task

    scene = tmp_path / "scene"
    shutil.copytree(depth_bag, scene / "recording" / "bag")
    write_task(scene, "r", "reasoning", [{"id": "a", "camera": "front", "question": "Q?", "reasoning": "R",
                                          "answer": "A"}])
    with pytest.raises(NothingConverted):
        export([scene], ["cosmos-reason-v1.0"], tmp_path / "out", use_cache=False)
    log = (tmp_path / "out" / "export.log").read_text()
    assert "front/depth left out (depth is not a camera view)" in log


def test_lerobot_depth_reads_back_and_round_trips(exported: Path, expected: dict[str, list[np.ndarray]],
                                                   tmp_path: Path) -> None:
    episode = robokit.open(exported / "lerobot")[0]
    assert not episode.info().skipped
    for cam in CAMERAS:
        stream = episode.streams[f"{cam}/depth"]
        assert isinstance(stream, ImageStream) and stream.encoding == "16UC1"
        for got, want in zip(stream.frames(), expected[cam], strict=True):
            mm = got.array()
            assert mm.dtype == np.uint16 and np.all(np.abs(mm.astype(float) - want) <= 0.01 * want)
    assert export([exported / "lerobot"], ["lerobot"], tmp_path, use_cache=False).status == "done"
    again = json.loads((tmp_path / "lerobot" / "meta" / "info.json").read_text())["features"]
    assert all(again[f"observation.images.{cam}_depth"]["info"]["is_depth_map"] for cam in CAMERAS)


def test_colour_video_refuses_depth_frames() -> None:
    from robokit.converters.video import VideoEncoder, VideoSettings
    from robokit.errors import ConversionError

    encoder = VideoEncoder(io.BytesIO(), 16, 16, 10, VideoSettings(codec="h264"))
    with pytest.raises(ConversionError, match="8-bit frames only"):
        encoder.add(np.zeros((16, 16), np.uint16))


def test_segmented_depth_reads_back_like_one_encoder(depth_bag: Path, expected: dict[str, list[np.ndarray]],
                                                     tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Depth (lossless HEVC) cut into segments remuxes into one stream: every frame back, within the quantizer."""
    from robokit.converters.lerobot import videos

    monkeypatch.setattr(videos, "SEGMENT_FRAMES", 4)
    job = export([depth_bag], ["lerobot"], tmp_path, {"fps": 10}, use_cache=False)
    assert job.status == "done", job.warnings
    episode = robokit.open(tmp_path / "lerobot")[0]
    for cam in CAMERAS:
        frames = [f.array() for f in episode.streams[f"{cam}/depth"].frames()]
        assert len(frames) == len(expected[cam]) > 4
        for mm, want in zip(frames, expected[cam], strict=True):
            assert np.all(np.abs(mm.astype(float) - want) <= 0.01 * want)
