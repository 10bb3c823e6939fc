"""The real `webdataset` reads robokit's depth PNGs as uint16 millimetres, exactly (`make conformance`).

webdataset's own image decoders convert every image to 8-bit L/RGB, so depth is decoded by a handler of the
`*_depth.png` keys (as the README shows), ahead of the standard decoders for the other keys.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

import robokit
from robokit.export.job import export
from robokit.samples.depthbag import FRAMES, write_depth_bag
from robokit.timeline import ImageStream
from robokit.timeline.depth import millimetre_stream

pytestmark = pytest.mark.conformance
CAMERAS = ("back", "front", "side", "top", "wrist")


def depth_png(key: str, data: bytes) -> Any:
    """A 16-bit depth PNG as a uint16 array; None (not handled) for any other key."""
    if not key.endswith("_depth.png"):
        return None
    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im)


def test_webdataset_decodes_uint16_depth(tmp_path: Path) -> None:
    import webdataset as wds

    bag = write_depth_bag(tmp_path / "bag")
    assert export([bag], ["webdataset"], tmp_path / "out", {"fps": 10}, use_cache=False).status == "done"
    root = tmp_path / "out" / "webdataset"
    source = robokit.open(bag)[0]
    expected = {}
    for cam in CAMERAS:
        stream = source.streams[f"{cam}/depth"]
        assert isinstance(stream, ImageStream)
        expected[cam] = [f.array() for f in millimetre_stream(stream).frames()]
    pattern = str(root / json.loads((root / "dataset.json").read_text())["shards"])
    samples = list(wds.WebDataset(pattern, shardshuffle=False).decode(depth_png, "rgb8"))
    assert len(samples) == FRAMES
    for t, sample in enumerate(samples):
        for cam in CAMERAS:
            pixels = np.asarray(sample[f"{cam}_depth.png"])
            assert pixels.dtype == np.uint16 and np.array_equal(pixels, expected[cam][t])
