from __future__ import annotations

import pytest

from robokit.converters.options import WriterOptions, camera_channel, parse_size
from robokit.errors import OptionError


def test_parse_size() -> None:
    assert parse_size("640x480") == (640, 480)
    assert parse_size([32, 24]) == (32, 24)
    for bad in ("640", "0x10", "axb"):
        with pytest.raises(OptionError, match="image_size"):
            parse_size(bad)


def test_from_mapping_normalises_and_validates() -> None:
    opts = WriterOptions.from_mapping({"cameras": "front", "fps": 15, "image_size": "64x48", "codec": "h264"},
                                      extra_keys=("codec",))
    assert opts.cameras == ("front/rgb",) and opts.image_size == (64, 48) and opts.extra == {"codec": "h264"}
    with pytest.raises(OptionError, match=r"unknown option.*colour"):
        WriterOptions.from_mapping({"colour": 1})
    with pytest.raises(OptionError, match="fps"):
        WriterOptions(fps=-1)
    with pytest.raises(OptionError, match="frame 'unity'"):
        WriterOptions(frame="unity")
    with pytest.raises(OptionError, match="quat_order"):
        WriterOptions(quat_order="zyxw")
    with pytest.raises(OptionError, match="resample"):
        WriterOptions(resample="cubic")


def test_camera_channel() -> None:
    assert camera_channel("front") == "front/rgb" and camera_channel("front/depth") == "front/depth"
