from __future__ import annotations

import io
from pathlib import Path

import av
import numpy as np
import pytest

from robokit.converters.video import VideoConcatenator, VideoEncoder, VideoSettings

FPS = 15


def _frames(levels: range) -> list[np.ndarray]:
    """Flat grey frames, one level each, so a decoded frame tells which source frame it is."""
    return [np.full((48, 64, 3), level, dtype=np.uint8) for level in levels]


def _segment(frames: list[np.ndarray], settings: VideoSettings) -> bytes:
    buffer = io.BytesIO()
    encoder = VideoEncoder(buffer, 64, 48, FPS, settings)
    for pixels in frames:
        encoder.add(pixels)
    encoder.close()
    return buffer.getvalue()


@pytest.mark.parametrize("codec", ["h264", "av1"])
def test_concatenated_segments_decode_in_order(codec: str, tmp_path: Path) -> None:
    settings = VideoSettings(codec=codec, crf=10)
    segments = [_frames(range(20, 120, 10)), _frames(range(130, 200, 10))]  # 10 then 7 frames
    out = VideoConcatenator(tmp_path / "cat.mp4", FPS)
    spans = [out.append(_segment(frames, settings)) for frames in segments]
    assert out.frames == 17 and out.size > 0
    out.close()
    assert spans == [(0, 10), (10, 17)]

    expected = [int(f[0, 0, 0]) for frames in segments for f in frames]
    with av.open(str(tmp_path / "cat.mp4")) as container:
        stream = container.streams.video[0]
        packets = [p for p in container.demux(stream) if p.size]
        dts = [p.dts for p in packets]
        assert dts == sorted(set(dts))  # strictly increasing
        container.seek(0)
        decoded = list(container.decode(stream))
        assert round(float(stream.average_rate or 0)) == FPS
    assert len(decoded) == len(expected)
    assert [round(float(f.pts * f.time_base * FPS)) for f in decoded] == list(range(len(expected)))
    levels = [float(f.to_ndarray(format="rgb24").mean()) for f in decoded]
    assert np.allclose(levels, expected, atol=3), levels


def test_h264_has_no_b_frames() -> None:
    assert VideoSettings(codec="h264").options()["bf"] == "0"
    assert "bf" not in VideoSettings(codec="av1").options()


def test_odd_frame_sizes_are_refused_clearly() -> None:
    from robokit.errors import ConversionError

    with pytest.raises(ConversionError, match="4x3 frames: yuv420p video needs an even width and height"):
        VideoEncoder(io.BytesIO(), 4, 3, FPS, VideoSettings())
