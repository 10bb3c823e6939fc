"""MCAP outputs written once per session from the sample recordings (both encodings), and small episodes."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mcap.reader import make_reader
from mcap_protobuf.decoder import DecoderFactory as ProtobufDecoders
from mcap_ros2.decoder import DecoderFactory as Ros2Decoders

import robokit
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.timeline import CameraInfo, Episode, EpisodeMeta, ImageStream, NumericStream, PoseStream, Stream
from robokit.timeline.images import ArrayFrameSource

T0 = 1_767_225_600_000_000_000
OPTIONS = {"fps": 15, "action": "joints/position_delta"}


def write(episodes: list[Episode], out: Path, **options: Any) -> Path:
    """Write `episodes` as MCAP under `out` and return the format folder."""
    get_converter("mcap").write(episodes, out, WriterOptions.from_mapping(options, ("mcap_encoding",
                                                                                    "mcap_image_format")))
    return out / "mcap"


def messages(path: Path, topic: str) -> list[tuple[int, Any]]:
    """(log time, decoded message) of one topic, in file order."""
    with path.open("rb") as f:
        r = make_reader(f, decoder_factories=[ProtobufDecoders(), Ros2Decoders()])
        return [(m.log_time, d) for _, _, m, d in r.iter_decoded_messages(topics=[topic], log_time_order=False)]


def summary(path: Path) -> Any:
    with path.open("rb") as f:
        return make_reader(f).get_summary()


@pytest.fixture(scope="session", params=["protobuf", "ros2"])
def encoding(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def sample_mcap(sample_dir: Path, encoding: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two sample episodes at 15 fps with a position-delta action, in `encoding`."""
    out = tmp_path_factory.mktemp(f"mcap-{encoding}")
    return write(robokit.open(sorted(sample_dir.iterdir())), out, mcap_encoding=encoding, **OPTIONS)


def ticks(n: int, hz: float = 10.0, start: int = T0) -> np.ndarray:
    return start + np.round(np.arange(n) * 1e9 / hz).astype(np.int64)


def pose(name: str, parent: str, child: str, n: int = 5, static: bool = False, **kw: Any) -> PoseStream:
    t = np.column_stack([np.linspace(0, 1, n), np.zeros(n), np.full(n, 0.5)])
    q = np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
    return PoseStream(name, ticks(n), t, q, parent_frame=parent, child_frame=child, static=static, **kw)


def camera(name: str, frame_id: str, n: int = 5, calibrated: bool = True) -> ImageStream:
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 255, (24, 32, 3), dtype=np.uint8) for _ in range(n)]
    info = CameraInfo(32, 24, np.array([[30.0, 0, 16], [0, 30.0, 12], [0, 0, 1]])) if calibrated else None
    return ImageStream(name, ticks(n), source=ArrayFrameSource(frames), width=32, height=24, frame_id=frame_id,
                       camera=info)


def episode(streams: Mapping[str, Stream] | list[Stream], episode_id: str = "ep") -> Episode:
    """An in-memory episode with joints (so a state exists) plus `streams`."""
    items = list(streams.values()) if isinstance(streams, Mapping) else streams
    joints = NumericStream("joints/position", ticks(5), np.arange(10.0).reshape(5, 2), ("a", "b"), "rad")
    return Episode(EpisodeMeta(f"test://{episode_id}", episode_id), {s.name: s for s in [joints, *items]})
