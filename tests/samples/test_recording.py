from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robokit
from robokit.errors import RobokitError
from robokit.samples import SampleSpec, write_sample_bag
from robokit.timeline import ImageStream, NumericStream


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    spec = SampleSpec(duration_s=1.0, width=32, height=24)
    a = write_sample_bag(tmp_path / "a" / "ep", spec)
    b = write_sample_bag(tmp_path / "b" / "ep", spec)
    for name in ("ep.mcap", "metadata.yaml"):
        assert (a / name).read_bytes() == (b / name).read_bytes()


def test_refuses_existing_folder(tmp_path: Path) -> None:
    with pytest.raises(RobokitError, match="already exists"):
        write_sample_bag(tmp_path)


def test_sample_reads_with_expected_streams(sample_bag: Path) -> None:
    (ep,) = robokit.open(sample_bag)
    joints = ep["joints/position"]
    assert isinstance(joints, NumericStream)
    assert len(joints) == 301 and joints.dim == 7
    assert joints.names[0] == "shoulder_pan"
    assert joints.origin is not None and joints.origin.time_source == "header"
    front, wrist = ep["front/rgb"], ep["wrist/rgb"]
    assert isinstance(front, ImageStream) and isinstance(wrist, ImageStream)
    assert (len(front), len(wrist)) == (91, 46)
    assert front.format == "raw" and wrist.format == "jpeg"
    assert front.camera is not None and front.camera.k[0, 0] > 0
    assert ep.tasks == ("pick up the red cube and place it in the bin",)
    assert {"tf/tool0", "tf/front_camera_optical", "tf/wrist_camera_optical"} <= set(ep.streams)
    first = front.frame(0).array()
    assert first.shape == (120, 160, 3) and first.dtype == np.uint8
