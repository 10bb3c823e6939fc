"""Coded video into Rerun: VideoStream samples holding the recorded packets (a stub `rr` here; the real
rerun-sdk in the conformance test)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import robokit
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.rerun.recording import IMAGE_BATCH, Grid, _video
from robokit.converters.videocopy import copyable
from robokit.samples.videobag import encode, write_video_bag
from robokit.timeline import ImageStream


class _Recording:
    def __init__(self) -> None:
        self.static: list[Any] = []
        self.columns: list[tuple[list[Any], Any]] = []

    def log(self, path: str, *values: Any, static: bool = False) -> None:
        self.static += values

    def send_columns(self, path: str, indexes: list[Any], columns: Any) -> None:
        self.columns.append((indexes, columns))


class _VideoStream:
    """rr.VideoStream's shape: the codec logged once, samples sent as columns."""

    def __init__(self, codec: str) -> None:
        self.codec = codec

    @staticmethod
    def columns(sample: list[bytes]) -> list[bytes]:
        return list(sample)


def _stub_rr() -> Any:
    return SimpleNamespace(VideoCodec=SimpleNamespace(H264="avc1", H265="hev1", AV1="av01"), VideoStream=_VideoStream,
                           TimeColumn=lambda name, **kw: (name, next(iter(kw.values()))))


def test_video_stream_samples_are_the_recorded_packets(tmp_path: Path) -> None:
    frames = IMAGE_BATCH + 6
    (ep,) = robokit.open(write_video_bag(tmp_path / "bag", frames=frames, width=160, height=96))
    stream = ep["front/rgb"]
    assert isinstance(stream, ImageStream)
    video, why = copyable(stream, ("h264",))
    assert video is not None and why == ""
    rec = _Recording()
    _video(_stub_rr(), rec, Grid(int(stream.timestamps[0]), 30.0), "cameras/front/rgb", stream, video)
    assert [v.codec for v in rec.static] == ["avc1"]
    assert [len(c) for _, c in rec.columns] == [IMAGE_BATCH, 6]
    assert [s for _, c in rec.columns for s in c] == [data for data, _ in encode(frames, 160, 96, 30)]
    frame_index = [i for indexes, _ in rec.columns for i in indexes[1][1].tolist()]
    assert frame_index == list(range(frames))


@pytest.mark.conformance
def test_rerun_reads_the_video_stream(tmp_path: Path) -> None:
    pytest.importorskip("rerun")
    from rerun.chunk import RrdReader

    bag = write_video_bag(tmp_path / "bag", frames=40, width=160, height=96)
    result = get_converter("rerun").write(robokit.open(bag), tmp_path / "out", WriterOptions())
    assert not [w for w in result.warnings if "not passed through" in w]
    (path,) = (tmp_path / "out" / "rerun").glob("*.rrd")
    verify = subprocess.run([sys.executable, "-m", "rerun", "rrd", "verify", str(path)], capture_output=True,
                            text=True, timeout=300)
    assert verify.returncode == 0, verify.stderr
    samples: list[bytes] = []
    for chunk in RrdReader(path).stream().to_chunks():
        if chunk.entity_path == "/cameras/front/rgb":
            batch = chunk.to_record_batch()
            if "VideoStream:sample" in batch.schema.names:
                samples += [bytes(row[0]) for row in batch.column("VideoStream:sample").to_pylist()]
    assert samples == [data for data, _ in encode(40, 160, 96, 30)]
