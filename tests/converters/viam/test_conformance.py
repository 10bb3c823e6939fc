"""Viam exports loaded the way training scripts load them: pandas for the Parquet files, PIL for the images."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from robokit.converters import get_converter

pytestmark = pytest.mark.conformance


def test_sequence_tables_load_timezone_aware_in_pandas(viam_out: Path) -> None:
    pd = pytest.importorskip("pandas")
    root = viam_out / "viam-sequence"
    (archive,) = root.glob("*.zip")
    with zipfile.ZipFile(archive) as zf:
        binary = pd.read_parquet(zf.open("binary_data.parquet"))
        tabular = pd.read_parquet(zf.open("tabular_data.parquet"))
        sequences = pd.read_parquet(zf.open("sequences.parquet"))
    for frame, cols in ((binary, ["timestamp"]), (tabular, ["timestamp"]), (sequences, ["start_at", "end_at"])):
        for c in cols:
            assert isinstance(frame[c].dtype, pd.DatetimeTZDtype) and str(frame[c].dt.tz) == "UTC"
    joined = binary.merge(sequences, on="sequence_id")  # the join Viam documents
    assert len(joined) == len(binary)
    readings = tabular[tabular.method_name == "position"].payload.map(json.loads)
    assert set(readings.iloc[0]["readings"]) >= {"shoulder_pan", "gripper"}
    for path in binary.path.iloc[[0, -1]]:
        with Image.open(root / path) as im:
            im.load()
    assert get_converter("viam-sequence").check(root) == []


def test_binary_lines_open_as_a_training_script_does(viam_out: Path) -> None:
    root = viam_out / "viam-binary"
    with (root / "dataset.jsonl").open() as f:
        entries = [json.loads(line) for line in f]
    for entry in entries[:: max(1, len(entries) // 10)]:
        with Image.open(entry["image_path"]) as im:
            im.load()
        assert [a["annotation_label"] for a in entry["classification_annotations"]]
