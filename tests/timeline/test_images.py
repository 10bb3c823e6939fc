"""Encoded frames passed through as recorded only when they hold the whole image."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from robokit.errors import SourceError
from robokit.timeline import Frame
from robokit.timeline.images import frame_at


def _encoded(fmt: str, exif_thumbnail: bool = False) -> bytes:
    pixels = np.random.default_rng(0).integers(0, 256, (24, 32, 3), dtype=np.uint8)
    buf = io.BytesIO()
    image = Image.fromarray(pixels)
    if exif_thumbnail:  # an APP1 segment carrying a whole JPEG (its own scan and end marker) before the image's
        thumb = io.BytesIO()
        image.resize((8, 6)).save(thumb, format="JPEG")
        exif = Image.Exif()
        image.save(buf, format="JPEG", exif=exif.tobytes() + thumb.getvalue())
    else:
        image.save(buf, format=fmt.upper())
    return buf.getvalue()


@pytest.mark.parametrize("fmt", ["jpeg", "png"])
def test_whole_frames_pass_through_as_recorded(fmt: str) -> None:
    data = _encoded(fmt)
    assert Frame(fmt, data=data).recorded() is data
    assert Frame(fmt, data=data).encoded(fmt) is data
    assert Frame(fmt, data=data + b"\0" * 16).recorded()  # padding after the end decodes: kept


def test_a_png_cut_after_its_pixels_decodes_and_is_kept() -> None:
    data = _encoded("png")[:-2]  # the IEND chunk's CRC lost: every pixel is there, and decoders read them
    assert Frame("png", data=data).recorded() is data


@pytest.mark.parametrize(("fmt", "cut"), [("jpeg", 2), ("jpeg", 100), ("jpeg", 0.5), ("png", 100), ("png", 0.5)])
def test_a_truncated_frame_is_refused_not_copied(fmt: str, cut: float) -> None:
    data = _encoded(fmt)
    short = data[: -cut if isinstance(cut, int) else int(len(data) * cut)]
    with pytest.raises(SourceError, match=f"{fmt} image of {len(short)} bytes cannot be decoded"):
        Frame(fmt, data=short).recorded()
    with pytest.raises(SourceError):
        Frame(fmt, data=short).encoded(fmt)


def test_a_thumbnails_end_marker_does_not_vouch_for_a_cut_image() -> None:
    data = _encoded("jpeg", exif_thumbnail=True)
    assert data.count(b"\xff\xd9") == 2 and Frame("jpeg", data=data).recorded() is data
    with pytest.raises(SourceError):
        Frame("jpeg", data=data[:-40]).recorded()


def test_frame_at_names_the_camera_and_frame() -> None:
    expected = r"^camera front/rgb: frame 7: jpeg image of 3 bytes cannot be decoded"
    with pytest.raises(SourceError, match=expected), frame_at("front/rgb", 7):
        Frame("jpeg", data=b"abc").array()
