"""Spilled payloads: written to a file beside the output, streamed or renamed into place, never left behind."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from robokit.converters.rlds.example import encode_example
from robokit.converters.spill import SpilledFrames, spill_folder, spilling
from robokit.export import export

OPTS = {"fps": 10, "action": "joints/position_delta"}


def test_payload_in_a_spill_file_is_streamed_then_removed(tmp_path: Path) -> None:
    with spill_folder(tmp_path / "out") as folder:
        assert folder.parent == tmp_path / "out" and folder.name.startswith(".spill.partial-")
        with spilling(folder) as spill:
            spill.file.write(b"abc" * 1000)
            payload = spill.payload()
        assert payload.path is not None and payload.path.parent == folder and payload.size == 3000
        out = io.BytesIO()
        payload.copy_to(out)
        assert out.getvalue() == b"abc" * 1000 and not payload.path.exists()
        with spilling(folder) as spill:
            spill.file.write(b"mcap")
            moved = spill.payload()
        moved.move_to(tmp_path / "episode.mcap")
        assert (tmp_path / "episode.mcap").read_bytes() == b"mcap"
        with pytest.raises(RuntimeError), spilling(folder) as spill:
            spill.file.write(b"half")
            raise RuntimeError("encoder failed")
        assert not any(folder.iterdir())
    assert not folder.exists()


def test_without_a_spill_folder_the_payload_stays_in_memory() -> None:
    with spilling(None) as spill:
        spill.file.write(b"xyz")
        payload = spill.payload()
    assert payload.path is None and payload.data == b"xyz" and payload.size == 3
    out = io.BytesIO()
    payload.copy_to(out)
    assert out.getvalue() == b"xyz"


def test_spill_folder_removed_on_failure(tmp_path: Path) -> None:
    with pytest.raises(ValueError), spill_folder(tmp_path) as folder:
        (folder / "left.part").write_bytes(b"x")
        raise ValueError
    assert list(tmp_path.iterdir()) == []


def test_export_leaves_no_spill_folder(sample_bag: Path, tmp_path: Path) -> None:
    job = export([sample_bag], ["mcap", "rlds", "webdataset"], tmp_path / "out", OPTS, use_cache=False)
    assert all(r.status == "written" for r in job.formats.values()), job.formats
    assert not [p.name for p in (tmp_path / "out").iterdir() if ".partial-" in p.name]


def test_spilled_frames_read_back_and_encode_like_a_list(tmp_path: Path) -> None:
    frames = [bytes([i]) * (100 * i + 1) for i in range(5)]
    spilled = SpilledFrames(tmp_path, iter(frames))
    assert len(spilled) == 5 and spilled[3] == frames[3] and spilled[-1] == frames[-1]
    assert spilled[1:3] == frames[1:3] and list(spilled) == frames and spilled.lengths == [len(f) for f in frames]
    assert list(tmp_path.iterdir()) == []  # an unnamed file: nothing to clean up
    features = {"steps/image": frames, "steps/x": np.arange(5, dtype=np.float32)}
    chunks, size = encode_example({**features, "steps/image": spilled})
    expected, expected_size = encode_example(features)
    assert (b"".join(chunks), size) == (b"".join(expected), expected_size)
