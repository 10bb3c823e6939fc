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


def test_writer_options_are_bounded() -> None:
    assert WriterOptions(fps=1000).fps == 1000 and WriterOptions(image_size="8192x8192").image_size == (8192, 8192)
    for fps in (0, -1, float("inf"), float("nan"), 1e9, 1000.5):
        with pytest.raises(OptionError, match="up to 1000"):
            WriterOptions(fps=fps)
    for size in ("100000x100000", "8193x10", [10, 0]):
        with pytest.raises(OptionError, match="image_size"):
            WriterOptions(image_size=size)  # type: ignore[arg-type]
    for field, bad in [("robot_type", "arm\x00"), ("task", "a\nb"), ("state", "j\udcff"), ("robot_type", "x" * 5000),
                       ("robot_type", 7)]:
        with pytest.raises(OptionError, match=field):
            WriterOptions(**{field: bad})
    with pytest.raises(OptionError, match="cameras"):
        WriterOptions(cameras=("front\x1b",))


def test_extra_option_parse() -> None:
    from robokit.converters.registry import ExtraOption

    crf = ExtraOption("crf", int, 30, "", low=0, high=63)
    assert crf.parse("63") == 63 and crf.parse(12) == 12 and crf.parse(12.0) == 12
    for bad in ("64", -1, "x", 1.5, True, None, "1e400", float("inf"), [1]):
        with pytest.raises(OptionError, match=r"crf .*expected an integer from 0 to 63"):
            crf.parse(bad)
    size = ExtraOption("size_mb", float, 1.0, "", low=0, high=10, above=True)
    assert size.parse("0.001") == 0.001 and size.parse(10) == 10.0
    for bad in (0, "nan", "inf", 10.5):
        with pytest.raises(OptionError, match="above 0 up to 10"):
            size.parse(bad)
    flag = ExtraOption("flag", bool, False, "")
    assert flag.parse("yes") is True and flag.parse(False) is False
    with pytest.raises(OptionError, match="true or false"):
        flag.parse("maybe")
    name = ExtraOption("name", str, None, "", check=str.lower)
    assert name.parse(None) is None and name.parse("ABC") == "abc"
    for bad in ("a\tb", "a\udcff", 3):
        with pytest.raises(OptionError, match="name"):
            name.parse(bad)
    choice = ExtraOption("codec", str, "av1", "", ("av1", "h264"))
    with pytest.raises(OptionError, match="one of av1, h264"):
        choice.parse("vp9")


def test_every_format_option_is_typed_and_bounded() -> None:
    """No option value can make robokit allocate without bound: numbers declare a range, defaults are valid."""
    from robokit.converters import available, get_converter

    for fmt in available():
        for opt in get_converter(fmt).extra_options:
            assert opt.type in (bool, int, float, str), (fmt, opt.name)
            if opt.type in (int, float):
                assert opt.low is not None and opt.high is not None, (fmt, opt.name)
            assert opt.parse(opt.default) == opt.default, (fmt, opt.name)


def test_checked_options_parse_and_cross_check() -> None:
    from robokit.converters.registry import checked_options

    opts = checked_options(["lerobot", "rlds"], WriterOptions(extra={"crf": "40", "split": "0.25", "other": 1}))
    assert opts.extra == {"crf": 40, "split": 0.25, "other": 1}
    for extra, message in [({"codec": "h264", "crf": 52}, "crf 52: expected 0 to 51 for h264"),
                           ({"preset": "14"}, "preset"), ({"gop": 1001}, "gop 1001"), ({"split": 1}, "split 1")]:
        with pytest.raises(OptionError, match=message):
            checked_options(["lerobot", "rlds"], WriterOptions(extra=extra))
    with pytest.raises(OptionError, match="av1 video is at most 240 fps"):
        checked_options(["lerobot"], WriterOptions(fps=500))
    assert checked_options(["lerobot"], WriterOptions(fps=500, extra={"codec": "h264"})).fps == 500
    with pytest.raises(OptionError, match="even width and height"):
        checked_options(["lerobot"], WriterOptions(image_size=(63, 48)))
    assert checked_options(["mcap"], WriterOptions(image_size=(63, 48))).image_size == (63, 48)


def test_writers_receive_typed_values_and_declared_defaults() -> None:
    from robokit.converters.lerobot.writer import CODEC, CRF, PRESET
    from robokit.converters.scene.options import SceneOptions
    from robokit.converters.viam.binary import ONLY_JSONL

    opts = WriterOptions(extra={"crf": "40", "only_jsonl": "off", "collision_from_splat": "yes"})
    assert opts.value(CRF) == 40 and opts.value(ONLY_JSONL) is False and opts.value(CODEC) == "av1"
    assert opts.value(PRESET) is None and SceneOptions.from_writer(opts).collision_from_splat is True
    assert SceneOptions.from_writer(WriterOptions()) == SceneOptions()
    for extra, name in [({"crf": "x"}, "crf"), ({"only_jsonl": "2"}, "only_jsonl")]:
        with pytest.raises(OptionError, match=name):
            WriterOptions(extra=extra).value(CRF if name == "crf" else ONLY_JSONL)


def test_common_options_are_declared_once() -> None:
    """WriterOptions' defaults are its declarations' (the CLI help and checks use the same ones)."""
    from dataclasses import fields

    from robokit.converters.options import COMMON_OPTIONS

    defaults = {f.name: f.default for f in fields(WriterOptions)}
    for opt in COMMON_OPTIONS:
        assert defaults[opt.name] == opt.default, opt.name
    assert WriterOptions(overwrite="false").overwrite is False  # type: ignore[arg-type]
    assert WriterOptions(fps="15").fps == 15.0  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="overwrite 'perhaps': expected true or false"):
        WriterOptions(overwrite="perhaps")  # type: ignore[arg-type]
