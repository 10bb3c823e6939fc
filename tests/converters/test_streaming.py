"""The shared plan/encode/assemble steps, through every episode writer."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.timeline import ArrayFrameSource, Frame, ImageStream
from tests.converters.conftest import MakeEpisode

EPISODE_FORMATS = ["lerobot", "rlds", "webdataset", "mcap", "viam-binary", "viam-sequence"]


@pytest.mark.parametrize("fmt", EPISODE_FORMATS)
def test_an_episode_with_a_corrupt_frame_is_skipped_and_the_others_written(
        make_episode: MakeEpisode, tmp_path: Path, fmt: str) -> None:
    bad = make_episode("bad")
    cam = bad["cam/rgb"]
    assert isinstance(cam, ImageStream)
    frames = list(cam.frames())
    frames[4] = Frame("jpeg", data=b"\xff\xd8 not a jpeg")
    bad = bad.with_streams({**bad.streams, "cam/rgb": replace(cam, source=ArrayFrameSource(frames))})
    options = WriterOptions(fps=10, action="joints/position_delta", image_size=(8, 4))  # resized: MCAP decodes too
    result = get_converter(fmt).write([make_episode("a"), bad, make_episode("c")], tmp_path, options)
    assert result.episodes == 2 and result.frames > 0
    ((episode_id, reason),) = result.skipped
    assert episode_id == "bad" and "jpeg image of 13 bytes cannot be decoded (not an image" in reason
    assert any("skipped episode bad" in w for w in result.warnings)


@pytest.mark.parametrize("fmt", EPISODE_FORMATS)
def test_a_truncated_recorded_jpeg_skips_the_episode_in_every_format(
        make_episode: MakeEpisode, tmp_path: Path, fmt: str) -> None:
    """Formats copying recorded JPEGs (WebDataset, RLDS, MCAP, Viam) refuse a cut one as LeRobot, which decodes it,
    does: the episode is skipped with the camera and frame named, not written with a frame no reader decodes."""
    bad = make_episode("bad")
    cam = bad["cam/rgb"]
    assert isinstance(cam, ImageStream)
    frames = [Frame("jpeg", data=f.encoded("jpeg")) for f in cam.frames()]
    frames[4] = Frame("jpeg", data=frames[4].recorded()[:-30])
    bad = bad.with_streams({**bad.streams, "cam/rgb": replace(cam, source=ArrayFrameSource(frames), format="jpeg")})
    options = WriterOptions(fps=10, action="joints/position_delta")
    result = get_converter(fmt).write([make_episode("a"), bad, make_episode("c")], tmp_path, options)
    assert result.episodes == 2
    ((episode_id, reason),) = result.skipped
    assert episode_id == "bad" and "camera cam/rgb: frame 4: jpeg image of" in reason, reason
