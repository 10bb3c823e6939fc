from __future__ import annotations

import contextlib
import io
import random
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from robokit.converters.mp4 import VideoConcatenator, read_track
from robokit.converters.video import VideoEncoder, VideoSettings
from robokit.errors import ConversionError
from tests.fuzz.mutate import BYTE_MUTATIONS

FPS = 15


def _frames(levels: range) -> list[np.ndarray]:
    """Flat grey frames, one level each, so a decoded frame tells which source frame it is."""
    return [np.full((48, 64, 3), level, dtype=np.uint8) for level in levels]


def _segment(frames: list[np.ndarray], settings: VideoSettings, fps: int = FPS) -> bytes:
    buffer = io.BytesIO()
    encoder = VideoEncoder(buffer, 64, 48, fps, settings)
    for pixels in frames:
        encoder.add(pixels)
    encoder.close()
    return buffer.getvalue()


def _packets(path: Path | bytes) -> list[tuple[bytes, bool, Fraction]]:
    """(bytes, keyframe, pts in seconds) of every sample, as FFmpeg's demuxer reads them."""
    with av.open(str(path) if isinstance(path, Path) else io.BytesIO(path)) as container:
        stream = container.streams.video[0]
        return [(bytes(p), bool(p.is_keyframe), p.pts * stream.time_base) for p in container.demux(stream) if p.size]


@pytest.mark.parametrize("codec", ["h264", "av1"])
def test_concatenated_segments_decode_in_order(codec: str, tmp_path: Path) -> None:
    settings = VideoSettings(codec=codec, crf=10, gop=4)
    segments = [_frames(range(20, 120, 10)), _frames(range(130, 200, 10))]  # 10 then 7 frames
    parts = [_segment(frames, settings) for frames in segments]
    out = VideoConcatenator(tmp_path / "cat.mp4", FPS)
    spans = [out.append(part) for part in parts]
    assert out.frames == 17 and out.size == sum(len(p[0]) for part in parts for p in _packets(part))
    out.close()
    assert spans == [(0, 10), (10, 17)]

    joined = _packets(tmp_path / "cat.mp4")  # the coded samples as they were, keyframes where they were
    assert [(data, key) for data, key, _ in joined] == [(d, k) for part in parts for d, k, _ in _packets(part)]
    assert [t for _, _, t in joined] == [Fraction(i, FPS) for i in range(17)]
    expected = [int(f[0, 0, 0]) for frames in segments for f in frames]
    with av.open(str(tmp_path / "cat.mp4")) as container:
        stream = container.streams.video[0]
        assert round(float(stream.average_rate or 0)) == FPS
        assert stream.frames == 17 and float(stream.duration * stream.time_base) == pytest.approx(17 / FPS)
        container.seek(int(12 / FPS / stream.time_base), stream=stream)  # a later part, from its keyframe
        assert [round(float(f.time) * FPS) for f in container.decode(stream)][:3] == [10, 11, 12]
        container.seek(0)
        decoded = list(container.decode(stream))
    assert [round(float(f.pts * f.time_base * FPS)) for f in decoded] == list(range(len(expected)))
    levels = [float(f.to_ndarray(format="rgb24").mean()) for f in decoded]
    assert np.allclose(levels, expected, atol=3), levels


def test_parts_of_another_coding_or_rate_are_refused(tmp_path: Path) -> None:
    first = _segment(_frames(range(0, 40, 10)), VideoSettings(codec="h264"))
    out = VideoConcatenator(tmp_path / "cat.mp4", FPS)
    out.append(first)
    other = _segment(_frames(range(0, 40, 10)), VideoSettings(codec="av1"))
    assert out.fits(read_track(first)) and not out.fits(read_track(other))
    with pytest.raises(ConversionError, match="codec headers differ"):
        out.append(other)
    with pytest.raises(ConversionError, match="30 frames per second, the file has 15"):
        VideoConcatenator(tmp_path / "rate.mp4", FPS).append(_segment(_frames(range(3)), VideoSettings(), fps=30))
    out.close()
    assert len(_packets(tmp_path / "cat.mp4")) == 4


def test_b_frames_are_refused(tmp_path: Path) -> None:
    """A part whose frames decode out of display order cannot be joined by shifting times."""
    buffer = io.BytesIO()
    texture = np.random.default_rng(0).integers(0, 255, (48, 64, 3), dtype=np.uint8)
    with av.open(buffer, "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=FPS, options={"bf": "2", "g": "12"})
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for i in range(12):
            frame = av.VideoFrame.from_ndarray(np.roll(texture, 3 * i, axis=1), format="rgb24")
            frame.pts = i
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    with pytest.raises(ConversionError, match="B-frames"):
        read_track(buffer.getvalue())


def test_a_long_join_keeps_its_sample_table_in_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sizes and keyframes wait in spools (files past a block: 16 KiB here, 256 KiB in use), not in memory, until
    the movie box is written from them."""
    from robokit import heap

    monkeypatch.setattr(heap, "MAP_ABOVE", 16 << 10)
    part = tmp_path / "part.mp4"
    part.write_bytes(_segment(_frames(range(0, 60, 2)), VideoSettings(gop=5)))
    out = VideoConcatenator(tmp_path / "long.mp4", FPS)
    for _ in range(400):
        out.append(part)
    assert out._sizes._file is not None and out._keys._file is not None  # 48 KiB of sizes, 19 KiB of keyframes
    out.close()
    joined = _packets(tmp_path / "long.mp4")
    assert len(joined) == 12000 and sum(key for _, key, _ in joined) == 2400
    assert joined[-1][2] == Fraction(11999, FPS)


def test_damaged_parts_raise_conversion_errors_only() -> None:
    """Seeded damage to a part's boxes: a ConversionError or a track, never another exception."""
    part = _segment(_frames(range(0, 80, 10)), VideoSettings(codec="h264"))
    moov = part.index(b"moov") - 4
    rng = random.Random(17)
    for _ in range(300):
        data = bytearray(part)
        head, tail = data[:moov], data[moov:]  # damage the boxes, not only the coded samples
        rng.choice(BYTE_MUTATIONS)(tail, rng)
        with contextlib.suppress(ConversionError):
            read_track(bytes(head + tail))
