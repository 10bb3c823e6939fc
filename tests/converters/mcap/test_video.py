"""Coded video into MCAP: foxglove.CompressedVideo messages holding the recorded bytes, one frame each."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcap.reader import make_reader
from mcap_protobuf.decoder import DecoderFactory as ProtobufDecoders
from mcap_ros2.decoder import DecoderFactory as Ros2Decoders

import robokit
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.samples.videobag import encode, frame_index, write_video_bag
from robokit.timeline import ImageStream


def _video_messages(path: Path) -> list[tuple[str, bytes]]:
    with path.open("rb") as f:
        reader = make_reader(f, decoder_factories=[ProtobufDecoders(), Ros2Decoders()])
        return [(msg.format, bytes(msg.data)) for schema, _, _, msg in reader.iter_decoded_messages()
                if schema is not None and schema.name in ("foxglove.CompressedVideo",
                                                          "foxglove_msgs/msg/CompressedVideo")]


@pytest.mark.parametrize("encoding", ["protobuf", "ros2"])
def test_recorded_packets_become_compressed_video(tmp_path: Path, encoding: str) -> None:
    bag = write_video_bag(tmp_path / "bag", frames=45, width=160, height=96)
    result = get_converter("mcap").write(robokit.open(bag), tmp_path / "out",
                                         WriterOptions(extra={"mcap_encoding": encoding}))
    (path,) = (tmp_path / "out" / "mcap").glob("*.mcap")
    assert get_converter("mcap").check(tmp_path / "out" / "mcap") == []
    assert not [w for w in result.warnings if "not passed through" in w]
    recorded = [data for data, _ in encode(45, 160, 96, 30)]
    messages = _video_messages(path)
    assert messages == [("h264", data) for data in recorded]  # the recorded bytes, one frame per message
    assert any(unit and unit[0] & 0x1F == 7 for unit in messages[30][1].split(b"\x00\x00\x01"))  # keyframe: SPS
    (ep,) = robokit.open(path)
    stream = ep["front/rgb"]
    assert isinstance(stream, ImageStream) and stream.format == "h264"
    assert [frame_index(f.array()) for f in stream.frames([0, 44, 31])] == [0, 44, 31]


def test_resampled_video_is_decoded_and_says_why(tmp_path: Path) -> None:
    bag = write_video_bag(tmp_path / "bag", frames=40, width=160, height=96)
    result = get_converter("mcap").write(robokit.open(bag), tmp_path / "out", WriterOptions(fps=15))
    (path,) = (tmp_path / "out" / "mcap").glob("*.mcap")
    assert not _video_messages(path)
    assert any("coded video not passed through: the frame rate changes" in w for w in result.warnings)


def test_lerobot_av1_video_passes_through(lerobot_root: Path, tmp_path: Path) -> None:
    episodes = robokit.open(lerobot_root)[:1]
    get_converter("mcap").write(episodes, tmp_path / "out", WriterOptions())
    (path,) = (tmp_path / "out" / "mcap").glob("*.mcap")
    formats = {fmt for fmt, _ in _video_messages(path)}
    assert formats == {"av1"}
    (ep,) = robokit.open(path)
    source = episodes[0]["front/rgb"]
    copied = ep["front/rgb"]
    assert isinstance(source, ImageStream) and isinstance(copied, ImageStream) and len(copied) == len(source)
    assert (copied.frame(3).array() == source.frame(3).array()).all()
