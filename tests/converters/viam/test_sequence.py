"""Viam sequence dataset writer: zip of three Parquet files, images beside it, round trip, options."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import robokit
from robokit import frames
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.prepare import prepare
from robokit.errors import OptionError
from robokit.timeline import Episode, EpisodeMeta, EventStream, ImageStream, NumericStream, PoseStream
from robokit.timeline.detections import decode_boxes


def tables(root: Path) -> dict[str, pa.Table]:
    (archive,) = root.glob("*.zip")
    with zipfile.ZipFile(archive) as zf:
        return {n: pq.read_table(zf.open(n)) for n in zf.namelist()}


def test_layout_and_schema(viam_out: Path) -> None:
    root = viam_out / "viam-sequence"
    t = tables(root)
    assert set(t) == {"binary_data.parquet", "tabular_data.parquet", "sequences.parquet"}
    for name, cols in (("binary_data.parquet", ["timestamp"]), ("tabular_data.parquet", ["timestamp"]),
                       ("sequences.parquet", ["start_at", "end_at"])):
        for c in cols:
            assert t[name].schema.field(c).type == pa.timestamp("us", tz="UTC")
    binary = t["binary_data.parquet"].to_pylist()
    assert {r["sequence_id"] for r in binary} == {"episode_000", "episode_001"}
    assert all(r["path"].startswith("binary_data/") and (root / r["path"]).is_file() for r in binary)
    assert binary[0]["path"] == f"binary_data/{binary[0]['binary_data_id']}.png"
    assert binary[0]["method_name"] == "GetImages"
    assert binary[0]["classifications"][0]["label"] and binary[0]["bounding_boxes"] is None
    seq = t["sequences.parquet"].to_pylist()
    assert [s["sequence_id"] for s in seq] == ["episode_000", "episode_001"] and seq[0]["tags"] == [seq[0]["task"]]
    assert seq[0]["robokit.source"].endswith("episode_000") and seq[0]["start_at"] < seq[0]["end_at"]
    tab = t["tabular_data.parquet"]
    assert set(zip(tab.column("component_name").to_pylist(), tab.column("method_name").to_pylist(), strict=True)) >= {
        ("joints", "position"), ("tf", "tool0"), ("task", "")}
    assert json.loads(tab.column("payload")[0].as_py())["readings"]
    assert get_converter("viam-sequence").check(root) == []


def _us(ts: np.ndarray) -> np.ndarray:
    return ts // 1000 * 1000


def test_round_trip(viam_out: Path, sample_dir: Path) -> None:
    back = robokit.open(viam_out / "viam-sequence")
    sources = robokit.open(sorted(sample_dir.iterdir()))
    for ep, src in zip(back, sources, strict=True):
        assert ep.id == src.id and ep.tasks == src.tasks and not ep.warnings and not ep.skipped
        assert set(ep.streams) == set(src.streams)
        for name, want in src.streams.items():
            got = ep[name]
            assert type(got) is type(want) and np.array_equal(got.timestamps, _us(want.timestamps)), name
            if isinstance(want, NumericStream):
                assert isinstance(got, NumericStream) and got.names == want.names and got.unit == want.unit
                assert np.array_equal(got.values, want.values, equal_nan=True)
            elif isinstance(want, PoseStream):
                converted = frames.convert_pose_stream(want, "rayform")
                assert isinstance(got, PoseStream) and got.convention == "rayform" and got.static == want.static
                assert np.array_equal(got.translation, converted.translation)
                assert np.array_equal(got.quaternion, converted.quaternion)
                assert (got.parent_frame, got.child_frame) == (want.parent_frame, want.child_frame)
            elif isinstance(want, EventStream):
                assert isinstance(got, EventStream) and got.values == want.values
            else:
                assert isinstance(got, ImageStream) and isinstance(want, ImageStream)
                for g, w in zip(got.frames([0, len(got) - 1]), want.frames([0, len(want) - 1]), strict=True):
                    assert g.data == w.data if want.format == "jpeg" else np.array_equal(g.array(), w.array())
        prepared = prepare(ep, WriterOptions(fps=15, action="joints/position_delta"))  # Viam → LeRobot et al.
        assert prepared.n_frames > 40 and set(prepared.cameras) == {"front/rgb", "wrist/rgb"}


def test_nanoseconds_detections_and_nan(tmp_path: Path, annotated: Episode) -> None:
    conv = get_converter("viam-sequence")
    conv.write([annotated], tmp_path, WriterOptions(extra={"time_unit": "ns", "dataset_id": "ds1"}))
    root = tmp_path / "viam-sequence"
    assert (root / "ds1.zip").is_file()
    binary = tables(root)["binary_data.parquet"]
    assert binary.schema.field("timestamp").type == pa.timestamp("ns", tz="UTC")
    boxes = binary.column("bounding_boxes").to_pylist()
    assert boxes[1] is None and boxes[0] == [{"label": "cube", "confidence": 0.75, "x_min": 0.25, "y_min": 0.25,
                                              "x_max": 0.5, "y_max": 0.75}]
    (back,) = robokit.open(root)
    for name, want in annotated.streams.items():
        assert np.array_equal(back[name].timestamps, want.timestamps) or name == "front/detections"
    joints = back["joints/position"]
    source = annotated["joints/position"]
    assert isinstance(joints, NumericStream) and isinstance(source, NumericStream)
    assert np.array_equal(joints.values, source.values, equal_nan=True)
    det = back["front/detections"]
    assert isinstance(det, EventStream) and len(det) == 2
    want = annotated["front/detections"]
    assert isinstance(want, EventStream)
    assert [decode_boxes(v) for v in det.values] == [decode_boxes(v) for v in want.values]
    assert conv.check(root) == []


def test_only_parquet_and_bad_options(tmp_path: Path, annotated: Episode) -> None:
    conv = get_converter("viam-sequence")
    result = conv.write([annotated], tmp_path, WriterOptions(extra={"only_parquet": True}))
    root = tmp_path / "viam-sequence"
    assert len(result.files) == 1 and result.files[0].endswith(".zip") and not (root / "binary_data").exists()
    assert conv.check(root) == []
    (back,) = robokit.open(root)
    assert "front/rgb" not in back.streams and back.skipped[0].count == 4  # every image file is missing
    with pytest.raises(OptionError, match="time_unit"):
        conv.write([annotated], tmp_path / "x", WriterOptions(extra={"time_unit": "ms"}))


def test_check_finds_a_missing_image(tmp_path: Path, annotated: Episode) -> None:
    conv = get_converter("viam-sequence")
    conv.write([annotated], tmp_path, WriterOptions())
    root = tmp_path / "viam-sequence"
    next((root / "binary_data").rglob("*.jpg")).unlink()
    problems = conv.check(root)
    assert any("1 of 4 image files missing" in p for p in problems)


def test_episode_without_the_camera_is_skipped(tmp_path: Path, annotated: Episode) -> None:
    other = Episode(EpisodeMeta("memory://b", "b"), {"joints/position": annotated["joints/position"]})
    result = get_converter("viam-sequence").write([other, annotated], tmp_path, WriterOptions(cameras=("front",)))
    assert result.episodes == 1 and result.frames == 4 and result.skipped[0][0] == "b"
    assert "camera 'front/rgb' not found" in result.warnings[0]
    (back,) = robokit.open(tmp_path / "viam-sequence")
    assert back.id == "annotated"
