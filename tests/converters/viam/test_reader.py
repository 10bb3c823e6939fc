"""Viam readers: exports as Viam writes them, escaping paths, missing images, sniffing, load_training_args."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

import robokit
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.viam.reader import VIAM_READER
from robokit.converters.viam.training import load_training_args
from robokit.errors import OptionError, SourceError
from robokit.timeline import ArrayFrameSource, Episode, EpisodeMeta, EventStream, Frame, ImageStream, NumericStream

T0 = 1_767_225_600_000_000_000
MS = 1_000_000


def png(value: int, size: tuple[int, int] = (6, 4)) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.full((size[1], size[0], 3), value, np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def episode(n: int = 3) -> Episode:
    times = T0 + np.arange(n, dtype=np.int64) * 50 * MS
    cam = ImageStream("cam/rgb", times, source=ArrayFrameSource([Frame("png", data=png(10 * i)) for i in range(n)]),
                      width=6, height=4, format="png")
    arm = NumericStream("arm/joint_positions", times, np.arange(2.0 * n).reshape(n, 2), ("j0", "j1"), "deg")
    task = EventStream("task", times[:1], ("sort",))
    return Episode(EpisodeMeta("memory://ep", "ep"), {s.name: s for s in (cam, arm, task)})


def write_jsonl(root: Path, rows: list[dict[str, Any]]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def viam_line(image_path: str, ts: str = "2026-01-01 00:00:00.5 +0000 UTC", **extra: Any) -> dict[str, Any]:
    return {"image_path": image_path, "classification_annotations": [{"annotation_label": "ok"}],
            "bounding_box_annotations": [], "timestamp": ts, "binary_data_id": "org/loc/f1", "part_id": "p1",
            "component_name": "camera-1", **extra}


def test_binary_export_as_viam_writes_it(tmp_path: Path) -> None:
    """No robokit fields: one episode per part, absolute paths inside the folder, boxes to pixels."""
    root = tmp_path / "dest"
    (root / "data").mkdir(parents=True)
    for i in range(3):
        (root / "data" / f"f{i}.png").write_bytes(png(i))
    box = {"annotation_label": "blue_star", "x_min_normalized": 0.5, "x_max_normalized": 1.0,
           "y_min_normalized": 0.25, "y_max_normalized": 0.75}
    rows = [viam_line(str(root / "data" / "f0.png"), bounding_box_annotations=[box]),
            viam_line("dest/data/f1.png", "2026-01-01T00:00:01Z"),  # relative: starts with the destination
            viam_line("data/f2.png", "2026-01-01 00:00:02 +0000 UTC", part_id="p2")]
    write_jsonl(root, rows)
    first, second = robokit.open(root)
    assert (first.id, second.id) == ("p1", "p2") and first.tasks == ("ok",)
    cam = first["camera-1/rgb"]
    assert isinstance(cam, ImageStream) and cam.timestamps.tolist() == [T0 + 500 * MS, T0 + 1000 * MS]
    assert (cam.width, cam.height, cam.format) == (6, 4, "png") and cam.frame(1).data == png(1)
    det = first["camera-1/detections"]
    assert isinstance(det, EventStream) and json.loads(det.values[0]) == [
        {"label": "blue_star", "x_min": 3.0, "y_min": 1.0, "x_max": 6.0, "y_max": 3.0, "confidence": None}]


@pytest.mark.parametrize("bad", ["../../secret.png", "/etc/passwd", "dest/data/../../../x.png", "data/../../x.png"])
def test_jsonl_paths_escaping_the_export_are_refused(tmp_path: Path, bad: str) -> None:
    root = write_jsonl(tmp_path / "dest", [viam_line(bad)])
    with pytest.raises(SourceError, match=r"escapes the export folder|outside the export folder"):
        robokit.open(root)


def _sequence_zip(root: Path, paths: list[str], extra_member: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    ts = pa.array([T0 // 1000 + i for i in range(len(paths))], pa.timestamp("us", tz="UTC"))
    binary = pa.table({"sequence_id": ["s"] * len(paths), "timestamp": ts, "part_id": ["p"] * len(paths),
                       "component_name": ["cam"] * len(paths), "method_name": ["GetImages"] * len(paths),
                       "path": paths})
    tabular = pa.table({"sequence_id": ["s", "s"], "timestamp": ts[:2] if len(paths) > 1 else pa.array(
        [T0 // 1000] * 2, pa.timestamp("us", tz="UTC")), "part_id": ["p", "p"], "component_name": ["sensor-1"] * 2,
        "method_name": ["Readings"] * 2, "payload": [json.dumps({"readings": {"a": 1.0, "b": {"c": 2}}}),
                                                     json.dumps({"readings": {"a": 3.5, "b": {"c": None}}})]})
    seqs = pa.table({"sequence_id": ["s"], "tags": [["t1"]], "start_at": ts[:1], "end_at": ts[-1:]})
    archive = root / "ds.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name, table in (("binary_data.parquet", binary), ("tabular_data.parquet", tabular),
                            ("sequences.parquet", seqs)):
            buf = io.BytesIO()
            pq.write_table(table, buf)
            zf.writestr(name, buf.getvalue())
        if extra_member:
            zf.writestr(extra_member, b"x")
    return archive


def test_sequence_export_as_viam_writes_it(tmp_path: Path) -> None:
    root = tmp_path / "dest"
    paths = ["binary_data/org/loc/a.png", "binary_data/org/loc/b.png"]
    for i, p in enumerate(paths):
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_bytes(png(i))
    _sequence_zip(root, paths)
    assert VIAM_READER.sniff(root) and VIAM_READER.sniff(root / "ds.zip")
    (ep,) = robokit.open(root)
    assert ep.id == "s" and ep.tasks == ("t1",) and ep["cam/rgb"].timestamps.tolist() == [T0, T0 + 1000]
    readings = ep["sensor-1/readings"]
    assert isinstance(readings, NumericStream) and readings.names == ("a", "b.c")
    assert np.array_equal(readings.values, [[1.0, 2.0], [3.5, np.nan]], equal_nan=True)


@pytest.mark.parametrize("bad", ["../outside.png", "/etc/passwd", "binary_data/../../x.png"])
def test_sequence_paths_escaping_the_export_are_refused(tmp_path: Path, bad: str) -> None:
    _sequence_zip(tmp_path / "dest", [bad])
    with pytest.raises(SourceError, match=r"escapes the export folder|outside the export folder"):
        robokit.open(tmp_path / "dest")


def test_zip_members_escaping_the_export_are_refused(tmp_path: Path) -> None:
    _sequence_zip(tmp_path / "dest", ["binary_data/a.png"], extra_member="../../evil.sh")
    with pytest.raises(SourceError, match=r"'\.\./\.\./evil\.sh' escapes"):
        robokit.open(tmp_path / "dest" / "ds.zip")


@pytest.mark.parametrize("fmt", ["viam-binary", "viam-sequence"])
def test_missing_image_is_skipped_with_a_warning_and_counted(tmp_path: Path, fmt: str) -> None:
    get_converter(fmt).write([episode(4)], tmp_path, WriterOptions())
    files = sorted(p for p in (tmp_path / fmt).rglob("*.png"))
    files[1].unlink()
    files[2].unlink()
    (ep,) = robokit.open(tmp_path / fmt)
    assert len(ep["cam/rgb"]) == 2
    assert [w for w in ep.warnings if "2 of 4 image files missing" in w]
    (skip,) = ep.skipped
    assert (skip.topic, skip.count, skip.reason) == ("cam", 2, "image file missing")


def test_sniff_and_not_viam(tmp_path: Path) -> None:
    get_converter("viam-binary").write([episode()], tmp_path, WriterOptions())
    assert VIAM_READER.sniff(tmp_path / "viam-binary") and VIAM_READER.sniff(tmp_path / "viam-binary" / "dataset.jsonl")
    (tmp_path / "other.jsonl").write_text('{"data_path": "x"}\n')
    (tmp_path / "empty.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    for path in (tmp_path / "other.jsonl", tmp_path / "empty.zip", tmp_path):
        assert not VIAM_READER.sniff(path)


def test_load_training_args_binary(tmp_path: Path) -> None:
    get_converter("viam-binary").write([episode()], tmp_path, WriterOptions())
    out = tmp_path / "model"
    job = load_training_args([f"--dataset_file={tmp_path / 'viam-binary' / 'dataset.jsonl'}",
                              f"--model_output_directory={out}", "--num_epochs=3", "--labels", "a b"])
    assert job.layout == "binary" and job.model_output_directory == out and out.is_dir()
    assert job.args == {"num_epochs": "3", "labels": "a b"}
    (ep,) = job.episodes
    assert ep.tasks == ("sort",) and len(ep["cam/rgb"]) == 3


def test_load_training_args_sequence_with_job_paths(tmp_path: Path) -> None:
    """A job gets the three files extracted, with absolute image paths of its own (trusted)."""
    get_converter("viam-sequence").write([episode()], tmp_path, WriterOptions())
    export = tmp_path / "viam-sequence"
    job_dir = tmp_path / "job"
    job_dir.mkdir()
    (archive,) = export.glob("*.zip")
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(job_dir)
    binary = pq.read_table(job_dir / "binary_data.parquet")
    absolute = pa.array([str(export / p) for p in binary.column("path").to_pylist()])
    pq.write_table(binary.set_column(binary.schema.get_field_index("path"), "path", absolute),
                   job_dir / "binary_data.parquet")
    job = load_training_args([f"--binary_data_file={job_dir / 'binary_data.parquet'}",
                              f"--tabular_data_file={job_dir / 'tabular_data.parquet'}",
                              f"--sequences_file={job_dir / 'sequences.parquet'}",
                              f"--model_output_directory={tmp_path / 'm'}", "--lr=0.1"])
    (ep,) = job.episodes
    assert job.layout == "sequence" and job.args == {"lr": "0.1"} and len(ep["cam/rgb"]) == 3
    assert np.array_equal(ep["arm/joint_positions"].values, episode()["arm/joint_positions"].values)  # type: ignore[attr-defined]
    with pytest.raises(SourceError, match="outside the export folder"):  # the same table is refused as an export
        robokit.open(job_dir)


@pytest.mark.parametrize(("argv", "match"), [
    (["--dataset_file=x.jsonl"], "--model_output_directory is required"),
    (["--model_output_directory=m"], "give --dataset_file"),
    (["--model_output_directory=m", "--dataset_file=a", "--sequences_file=b"], "cannot be combined"),
    (["--model_output_directory=m", "--sequences_file=b"], "needs --binary_data_file, --tabular_data_file"),
    (["--model_output_directory=m", "epochs=3"], "unexpected argument"),
])
def test_load_training_args_errors(argv: list[str], match: str) -> None:
    with pytest.raises(OptionError, match=match):
        load_training_args(argv)


def test_load_training_args_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such file"):
        load_training_args([f"--dataset_file={tmp_path / 'nope.jsonl'}", f"--model_output_directory={tmp_path}"])
