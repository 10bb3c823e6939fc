"""The real `lerobot` package loads robokit's re-exports of real LeRobot datasets (run by `make conformance`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from robokit.cli import main
from robokit.converters.lerobot.layout import DEFAULT_FEATURES

pytestmark = pytest.mark.conformance

# dataset (a `lerobot_roots` name) -> (state key, action key, convert options, source episodes that convert)
DATASETS = {
    "reachy2_apple_storage_v30": ("observation.state", "action", ["--camera", "none"], [0, 1, 2]),
    "reachy2_apple_storage_v30_keys": ("state", "actions", ["--camera", "none"], [0, 1, 2]),
    "g1_inspire_v21": ("observation.state", "action", ["--image-size", "80x60"], [1]),
    "g1_inspire_v21_keys": ("state", "actions", ["--image-size", "80x60"], [1]),  # camera `wrist`
    "gr1_picknplace_v20": ("observation.state", "action", ["--camera", "none"], [0, 1]),  # extras, no frame_index
}


def _tasks(root: Path) -> dict[int, str]:
    """task_index → text: from tasks.jsonl (v2.1) or tasks.parquet, whose text lerobot keeps in the pandas index."""
    if (root / "meta" / "tasks.jsonl").is_file():
        rows = [json.loads(line) for line in (root / "meta" / "tasks.jsonl").read_text().splitlines()]
        return {int(r["task_index"]): str(r["task"]) for r in rows}
    frame = pq.read_table(root / "meta" / "tasks.parquet").to_pandas()
    return {int(i): str(text) for text, i in frame["task_index"].items()}


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_lerobot_loads_the_reexport_with_source_values(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       lerobot_roots: dict[str, Path]) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-datasets"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    state_key, action_key, options, kept = DATASETS[name]
    out = tmp_path / "out"
    root = lerobot_roots[name]
    assert main(["convert", str(root), "--to", "lerobot", "--out", str(out), "--no-cache", "--workers", "1",
                 *options]) == 0
    ds = LeRobotDataset(f"robokit/{name}", root=out / "lerobot")
    src_features = json.loads((root / "meta" / "info.json").read_text())["features"]
    video = "--camera" in options  # exported with --camera none: the video features are absent
    exported = {k for k, f in src_features.items() if f["dtype"] != "video" or not video}
    assert set(ds.features) == exported | {"frame_index"}  # GR00T's v2.0 data has none; written as LeRobot v3.0 does
    files = sorted((root / "data").rglob("*.parquet"))
    source = pa.concat_tables([pq.read_table(f) for f in files], promote_options="permissive")
    source = source.filter(pa.compute.is_in(source.column("episode_index"), pa.array(kept)))
    source = source.sort_by([("episode_index", "ascending"),
                             ("frame_index" if "frame_index" in source.column_names else "index", "ascending")])
    assert ds.num_episodes == len(kept) and ds.num_frames == source.num_rows
    tasks = _tasks(root)
    states, actions = source.column(state_key).to_pylist(), source.column(action_key).to_pylist()
    for i in sorted({0, ds.num_frames // 2, ds.num_frames - 1}):
        item = ds[i]
        assert np.allclose(item[state_key].numpy(), states[i], atol=1e-6)  # under the source's feature keys
        assert np.allclose(item[action_key].numpy(), actions[i], atol=1e-6)
        assert isinstance(item["task"], str) and item["task"]
        assert item["task"] == tasks[int(source.column("task_index")[i].as_py())]
        for key, feature in ds.features.items():
            if feature["dtype"] not in ("video", "image") and key in source.column_names \
                    and key not in DEFAULT_FEATURES:
                assert np.allclose(np.asarray(item[key].numpy(), dtype=np.float64).ravel(),  # extras too
                                   np.asarray(source.column(key)[i].as_py(), dtype=np.float64).ravel()), key
            if feature["dtype"] == "video":
                assert tuple(item[key].shape) == (3, 60, 80)
