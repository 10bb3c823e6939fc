"""Spilled payloads: written to a file beside the output, streamed or renamed into place, never left behind."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from robokit.converters import spill
from robokit.converters.rlds.example import encode_example
from robokit.converters.spill import SpilledFrames, spill_folder, spilling
from robokit.export import export

OPTS = {"fps": 10, "action": "joints/position_delta"}


def test_payload_in_a_spill_file_is_streamed_then_removed(tmp_path: Path) -> None:
    with spill_folder(tmp_path / "out") as folder:
        assert folder.parent == tmp_path / "out" and folder.name.startswith(".spill.partial-")
        with spilling(folder, limit=1000) as spill:
            spill.file.write(b"abc" * 300)
            spill.file.write(b"abc" * 700)  # past the limit: moved to a file
            payload = spill.payload()
        assert payload.path is not None and payload.path.parent == folder and payload.size == 3000
        out = io.BytesIO()
        payload.copy_to(out)
        assert out.getvalue() == b"abc" * 1000 and not payload.path.exists()
        with spilling(folder, limit=0) as spill:
            spill.file.write(b"mcap")
            moved = spill.payload()
        moved.move_to(tmp_path / "episode.mcap")
        assert (tmp_path / "episode.mcap").read_bytes() == b"mcap"
        with pytest.raises(RuntimeError), spilling(folder, limit=0) as spill:
            spill.file.write(b"half")
            raise RuntimeError("encoder failed")
        assert not any(folder.iterdir())
    assert not folder.exists()


def test_small_payloads_and_those_without_a_spill_folder_stay_in_memory(tmp_path: Path) -> None:
    with spilling(tmp_path) as small:
        small.file.write(b"abc")
    assert small.payload().data == b"abc" and list(tmp_path.iterdir()) == []
    with spilling(None, limit=0) as spill:
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


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_spilled_export_is_byte_identical_and_leaves_nothing(sample_dir: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    bags, formats = sorted(sample_dir.iterdir()), ["mcap", "rlds", "webdataset", "lerobot"]
    export(bags, formats, tmp_path / "memory", OPTS, use_cache=False)
    monkeypatch.setattr(spill, "SPILL_ABOVE", 0)  # every payload and every frame through a spill file
    for out, workers in (("serial", 1), ("parallel", 2)):
        job = export(bags, formats, tmp_path / out, OPTS, use_cache=False, workers=workers)
        assert all(r.status == "written" for r in job.formats.values()), job.formats
        assert not [p.name for p in (tmp_path / out).iterdir() if ".partial-" in p.name]
        for fmt in formats:
            assert _tree(tmp_path / out / fmt) == _tree(tmp_path / "memory" / fmt), (out, fmt)


def test_spilled_frames_read_back_and_encode_like_a_list(tmp_path: Path) -> None:
    frames = [bytes([i]) * (100 * i + 1) for i in range(5)]
    spilled = SpilledFrames(tmp_path, iter(frames), limit=250)  # the first two in memory, then all in a file
    assert len(spilled) == 5 and spilled[3] == frames[3] and spilled[-1] == frames[-1] and spilled[0] == frames[0]
    assert spilled[1:3] == frames[1:3] and list(spilled) == frames and list(spilled.lengths) == [len(f) for f in frames]
    assert list(tmp_path.iterdir()) == []  # an unnamed file: nothing to clean up
    assert list(SpilledFrames(tmp_path, iter(frames))) == frames  # under the default limit: in memory
    features = {"steps/image": frames, "steps/x": np.arange(5, dtype=np.float32)}
    chunks, size = encode_example({**features, "steps/image": spilled})
    expected, expected_size = encode_example(features)
    assert (b"".join(chunks), size) == (b"".join(expected), expected_size)
    many = [bytes([i % 251]) * (i % 7 + 1) for i in range(10_000)]  # past the index's first in-memory block
    long = SpilledFrames(tmp_path, iter(many), limit=0)
    assert len(long) == 10_000 and long[9_999] == many[9_999] and long[-5_000] == many[-5_000] and long[0] == many[0]
    assert long.lengths.tolist() == [len(f) for f in many]
