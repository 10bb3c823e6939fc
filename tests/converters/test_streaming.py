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
