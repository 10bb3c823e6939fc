"""`check` finds broken files: unfinished, two parents, cycles, bad quaternions, uncalibrated or unplaced images."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from mcap.writer import Writer

from robokit.converters.mcap.check import check_file, check_folder
from robokit.converters.mcap.encoders import encoder_for
from robokit.converters.mcap.topic import Topic
from robokit.converters.mcap.writer import write_file
from robokit.errors import ConversionError

from .conftest import T0, episode, pose, write

Q = np.array([[0.0, 0.0, 0.0, 1.0]])
Z = np.zeros((1, 3))


def test_unfinished_file(tmp_path: Path) -> None:
    out = write([episode([pose("tf/a", "world", "a")])], tmp_path)
    path = out / "ep.mcap"
    path.write_bytes(path.read_bytes()[:-100])
    assert check_file(path) == ["not a finished MCAP (magic missing at the start or the end)"]
    assert check_folder(tmp_path) == [f"{tmp_path}: no .mcap files"]


def test_broken_tree_and_images(tmp_path: Path) -> None:
    enc = encoder_for("protobuf")
    items = [
        (T0, enc.transforms(T0, ["world", "a"], ["a", "b"], np.zeros((2, 3)), np.vstack([Q, Q]))),
        (T0 + 1, enc.transforms(T0 + 1, ["world", "c"], ["b", "c__"], np.zeros((2, 3)), np.vstack([Q, Q * 2]))),
        (T0 + 2, enc.transforms(T0 + 2, ["x"], ["y"], Z, Q)),
        (T0 + 3, enc.transforms(T0 + 3, ["y"], ["x"], Z, Q)),
        (T0 + 4, enc.transforms(T0 + 9, ["world"], ["d"], Z, Q)),
    ]
    image = enc.compressed_image(T0, "nowhere_optical", "bmp", b"\0")

    def tf() -> Iterator[tuple[int, bytes]]:
        yield from items

    def img() -> Iterator[tuple[int, bytes]]:
        yield T0, image

    path = tmp_path / "bad.mcap"
    with path.open("wb") as f:
        write_file(f, [Topic("/tf", "transforms", len(items), tf), Topic("camera", "compressed_image", 1, img)],
                   enc, {}, None, T0)
    problems = check_file(path)
    text = "\n".join(problems)
    for expected in ("frame 'b' has 2 parents", "cycle through frame", "roots", "quaternion of norm",
                     "stamp differs from the log time", "'nowhere_optical' used by an image", "no calibration",
                     "image format 'bmp'", "camera: topic does not start with '/'"):
        assert expected in text, (expected, problems)


def test_counts_record_checked(tmp_path: Path) -> None:
    enc = encoder_for("ros2")
    path = tmp_path / "short.mcap"
    with path.open("wb") as f:
        w = Writer(f)
        w.start(profile="ros2")
        name, encoding, data = enc.schema("log")
        channel = w.register_channel("/log", "cdr", w.register_schema(name, encoding, data))
        w.add_message(channel, T0, enc.log(T0, "info", "x", "y"), T0)
        w.add_metadata("robokit.counts", {"/log": "2"})
        w.finish()
    assert check_file(path) == ["/log: 1 messages, robokit.counts says 2"]


def test_writer_refuses_a_short_topic(tmp_path: Path) -> None:
    enc = encoder_for("protobuf")

    def logs() -> Iterator[tuple[int, bytes]]:
        yield T0, enc.log(T0, "info", "x", "y")

    with pytest.raises(ConversionError, match="wrote 1 messages, expected 2"):
        write_file(io.BytesIO(), [Topic("/log", "log", 2, logs)], enc, {}, None, T0)
