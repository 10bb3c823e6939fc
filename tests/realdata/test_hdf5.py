"""Real robosuite demo files (tests/realdata/hdf5, see SOURCES.md): read, listed by `info`, converted with the
recorded values kept."""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import robokit
from robokit.cli import main
from robokit.timeline import NumericStream

HDF5 = Path(__file__).parent / "hdf5"
WIPE, SAWYER = HDF5 / "robosuite_wipe_panda_demo.hdf5", HDF5 / "roboticssuite_sawyer_test_demo.hdf5"


@pytest.mark.parametrize("path", [WIPE, SAWYER], ids=["wipe", "sawyer"])
def test_real_demo_reads_every_dataset(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", "--json", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)[0]
    assert report["source_format"] == "robomimic"
    (ep,) = robokit.open(path)
    with h5py.File(path) as f:
        demo = f["data/demo_1"]
        for channel in ep.streams:
            stream = ep[channel]
            assert isinstance(stream, NumericStream)
            key = "actions" if channel == "action" else channel
            assert np.array_equal(stream.values, demo[key][()].reshape(len(stream), -1)), channel
        empty = [k for k in demo if demo[k].shape[1] == 0]
    assert sorted(s.topic.rsplit("/", 1)[1] for s in ep.skipped) == sorted(empty)  # zero-width: skipped, said why
    assert ep["action"].timestamps[1] == 50_000_000  # no rate stored: robosuite's 20 Hz, with a warning
    assert any("20 Hz assumed" in w for w in ep.warnings)


def test_real_demo_converts_to_lerobot_with_its_values(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["convert", str(WIPE), "--to", "lerobot", "--out", str(out), "--state", "states", "--fps", "20",
                 "--no-cache", "--workers", "1"]) == 0
    table = pa.concat_tables([pq.read_table(p) for p in sorted((out / "lerobot" / "data").rglob("*.parquet"))])
    with h5py.File(WIPE) as f:
        actions, states = f["data/demo_1/actions"][()], f["data/demo_1/states"][()]
    assert table.num_rows == len(actions)
    written = np.stack(table.column("action").to_numpy(zero_copy_only=False))
    assert np.allclose(written, actions, atol=1e-6)
    assert np.allclose(np.stack(table.column("observation.state").to_numpy(zero_copy_only=False)), states, atol=1e-5)
