"""Viam exports of the generated sample recordings (written once per session) and a small annotated episode."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import robokit
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.timeline import (
    ArrayFrameSource,
    Episode,
    EpisodeMeta,
    EventStream,
    Frame,
    ImageStream,
    NumericStream,
    PoseStream,
)
from robokit.timeline.detections import Box, encode_boxes

T0 = 1_767_225_600_123_456_789  # not on a microsecond: the sequence layout truncates
MS = 1_000_000


@pytest.fixture(scope="session")
def viam_out(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`<out>/viam-binary` and `<out>/viam-sequence` of both sample episodes."""
    out = tmp_path_factory.mktemp("viam-out")
    episodes = robokit.open(sorted(sample_dir.iterdir()))
    for fmt in ("viam-binary", "viam-sequence"):
        get_converter(fmt).write(episodes, out, WriterOptions())
    return out


def jpeg(pixels: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


@pytest.fixture()
def annotated() -> Episode:
    """16×8 JPEG camera `front` at 10 Hz with detections on frames 0 and 2, joints with a NaN, a pose, a task."""
    times = T0 + np.arange(4, dtype=np.int64) * 100 * MS
    frames = [Frame("jpeg", data=jpeg(np.full((8, 16, 3), 40 * i, np.uint8))) for i in range(4)]
    front = ImageStream("front/rgb", times, source=ArrayFrameSource(frames), width=16, height=8, format="jpeg")
    boxes = [[Box("cube", 4.0, 2.0, 8.0, 6.0, 0.75)],
             [Box("cube", 0.0, 0.0, 16.0, 8.0), Box("bin", 12.0, 4.0, 14.0, 8.0)]]
    detections = EventStream("front/detections", times[[0, 2]] + 3 * MS, tuple(encode_boxes(b) for b in boxes))
    joints = NumericStream("joints/position", T0 + np.arange(5, dtype=np.int64) * 7_777_777,
                           np.array([[0.1, 0.2], [0.3, np.nan], [1 / 3, 2 / 3], [1e-9, -5.0], [7.0, 8.0]]),
                           ("a", "b"), "rad")
    pose = PoseStream("tf/tool0", times[:2], [[1.0, 2.0, 3.0], [0.5, 0.0, -0.5]],
                      [[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, np.sqrt(0.5), np.sqrt(0.5)]], parent_frame="base",
                      child_frame="tool0", convention="rayform")
    task = EventStream("task", times[:1], ("stack the cubes",))
    meta = EpisodeMeta(source_uri="memory://annotated", episode_id="annotated", source_version="v1")
    return Episode(meta, {s.name: s for s in (front, detections, joints, pose, task)})
