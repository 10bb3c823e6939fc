"""Viam binary dataset writer: JSON Lines layout, files, round trip, options and bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import robokit
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.viam.layout import parse_time
from robokit.errors import ChannelError, ConversionError, OptionError
from robokit.timeline import Episode, ImageStream
from robokit.timeline.detections import decode_boxes


def lines(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / "dataset.jsonl").read_text().splitlines()]


def test_layout_and_metadata(viam_out: Path, sample_bag: Path) -> None:
    root = viam_out / "viam-binary"
    rows = lines(root)
    (src,) = robokit.open(sample_bag)
    assert len(rows) == 2 * (len(src["front/rgb"]) + len(src["wrist/rgb"]))  # both episodes are as long
    first = rows[0]
    assert set(first) >= {"image_path", "classification_annotations", "bounding_box_annotations", "timestamp",
                          "binary_data_id", "part_id", "component_name"}
    assert first["classification_annotations"] == [{"annotation_label": src.tasks[0]}]
    assert first["bounding_box_annotations"] == [] and first["component_name"] == "front"
    assert first["timestamp"].endswith(" +0000 UTC") and parse_time(first["timestamp"]) == src["front/rgb"].start_ns
    assert first["binary_data_id"].count("/") == 2 and len({r["binary_data_id"] for r in rows}) == len(rows)
    assert first["image_path"].startswith(str(viam_out / "viam-binary" / "data") + "/")
    assert all(Path(r["image_path"]).is_file() for r in rows)
    assert len(list((root / "data").iterdir())) == len(rows)
    assert not list(viam_out.glob(".viam-binary.partial-*"))
    assert get_converter("viam-binary").check(root) == []


def test_round_trip_images_times_tasks(viam_out: Path, sample_dir: Path) -> None:
    back = robokit.open(viam_out / "viam-binary")
    sources = robokit.open(sorted(sample_dir.iterdir()))
    assert [e.id for e in back] == [e.id for e in sources]
    for ep, src in zip(back, sources, strict=True):
        assert set(ep.streams) == {"front/rgb", "wrist/rgb"} and ep.tasks == src.tasks
        assert ep.meta.tags["source"] == src.meta.source_uri and not ep.warnings
        for name in ep.streams:
            got, want = ep[name], src[name]
            assert isinstance(got, ImageStream) and isinstance(want, ImageStream)
            assert np.array_equal(got.timestamps, want.timestamps)  # JSON keeps the nanosecond
            assert (got.width, got.height) == (want.width, want.height)
            for g, w in zip(got.frames(), want.frames(), strict=True):
                if want.format == "jpeg":
                    assert g.format == "jpeg" and g.data == w.data  # passed through, not re-encoded
                else:
                    assert g.format == "png" and np.array_equal(g.array(), w.array())  # raw → lossless PNG


def test_relative_destination_stays_relative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, annotated: Episode
                                              ) -> None:
    monkeypatch.chdir(tmp_path)
    get_converter("viam-binary").write([annotated], Path("exports"), WriterOptions())
    rows = lines(tmp_path / "exports" / "viam-binary")
    assert all(r["image_path"].startswith("exports/viam-binary/data/") for r in rows)
    assert all(Path(r["image_path"]).is_file() for r in rows)  # opens from where the export ran, as Viam's do


def test_detections_become_normalised_boxes(tmp_path: Path, annotated: Episode) -> None:
    ep = annotated
    get_converter("viam-binary").write([ep], tmp_path, WriterOptions())
    rows = lines(tmp_path / "viam-binary")
    assert [len(r["bounding_box_annotations"]) for r in rows] == [1, 0, 2, 0]  # nearest frame within half a period
    box = rows[0]["bounding_box_annotations"][0]
    assert box == {"annotation_label": "cube", "x_min_normalized": 0.25, "x_max_normalized": 0.5,
                   "y_min_normalized": 0.25, "y_max_normalized": 0.75, "confidence": 0.75}
    (back,) = robokit.open(tmp_path / "viam-binary")
    assert back.tasks == ("stack the cubes",)
    src = ep["front/detections"]
    got = back["front/detections"]
    assert np.array_equal(got.timestamps, ep["front/rgb"].timestamps[[0, 2]])
    assert [decode_boxes(v) for v in got.values] == [decode_boxes(v) for v in src.values]  # type: ignore[attr-defined]


def test_only_jsonl_and_options(tmp_path: Path, annotated: Episode) -> None:
    ep = annotated
    opts = WriterOptions(task="pick", extra={"only_jsonl": True, "dataset_id": "my-set", "part_id": "part-1"})
    result = get_converter("viam-binary").write([ep], tmp_path, opts)
    root = tmp_path / "viam-binary"
    assert result.files == ["dataset.jsonl"] and not (root / "data").exists() and result.frames == 4
    rows = lines(root)
    assert {r["part_id"] for r in rows} == {"part-1"} and rows[0]["binary_data_id"].startswith("my-set/")
    assert rows[0]["classification_annotations"] == [{"annotation_label": "pick"}]
    assert rows[0]["image_path"].endswith(".jpg") and get_converter("viam-binary").check(root) == []
    with pytest.raises(OptionError, match="dataset_id"):
        get_converter("viam-binary").write([ep], tmp_path / "x", WriterOptions(extra={"dataset_id": "a/b"}))


def test_camera_selection_resize_and_overwrite(tmp_path: Path, sample_bag: Path) -> None:
    (src,) = robokit.open(sample_bag)
    conv = get_converter("viam-binary")
    conv.write([src], tmp_path, WriterOptions(cameras=("wrist",), image_size=(80, 60)))
    (back,) = robokit.open(tmp_path / "viam-binary")
    wrist = back["wrist/rgb"]
    assert list(back.streams) == ["wrist/rgb"] and isinstance(wrist, ImageStream)
    assert (wrist.width, wrist.height) == (80, 60) and wrist.format == "jpeg"
    with pytest.raises(ConversionError, match="already exists"):
        conv.write([src], tmp_path, WriterOptions())
    with pytest.raises(ChannelError, match="available: front/rgb, wrist/rgb"):
        conv.write([src], tmp_path, WriterOptions(cameras=("side",), overwrite=True))
    assert (tmp_path / "viam-binary" / "dataset.jsonl").is_file()  # the failed write left the old export alone


def test_time_text() -> None:
    from robokit.converters.viam.layout import go_time, rfc3339

    t0 = 1_767_225_600_123_456_789
    assert go_time(t0) == "2026-01-01 00:00:00.123456789 +0000 UTC"
    assert go_time(t0 - 123_456_789) == "2026-01-01 00:00:00 +0000 UTC"
    assert rfc3339(t0 + 11) == "2026-01-01T00:00:00.1234568Z"
    for text in ("2026-01-01 00:00:00.1234568 +0000 UTC", "2026-01-01T00:00:00.1234568Z",
                 "2026-01-01T01:00:00.1234568+01:00", "2026-01-01 00:00:00.1234568 +0000 UTC m=+0.5"):
        assert parse_time(text) == t0 + 11
    with pytest.raises(ValueError, match="not a timestamp"):
        parse_time("yesterday")
