"""Real LeRobot datasets written by lerobot (tests/realdata/lerobot, see SOURCES.md): info → convert to every
episode format → check, values compared with the source Parquet, and LeRobot → robokit → LeRobot round trips."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import robokit
from robokit.cli import main
from robokit.converters.actions import ActionMeaning
from robokit.converters.lerobot.reader import feature_names
from robokit.errors import SourceError
from robokit.sim.meaning import read_meaning
from robokit.timeline import NumericStream

LEROBOT = Path(__file__).parent / "lerobot"

APPLE, G1 = LEROBOT / "reachy2_apple_storage_v30", LEROBOT / "g1_inspire_v21"
FORMATS = ("lerobot", "rlds", "webdataset", "mcap", "viam-binary")
# dataset -> (state key, action key, camera option, episodes expected to convert)
DATASETS: dict[str, tuple[str, str, list[str], list[int]]] = {
    "reachy2_apple_storage_v30": ("observation.state", "action", ["--camera", "none"], [0, 1, 2]),
    "reachy2_apple_storage_v30_keys": ("state", "actions", ["--camera", "none"], [0, 1, 2]),  # built by conftest
    "g1_inspire_v21": ("observation.state", "action", ["--image-size", "80x60"], [1]),  # episode 0 lacks its MP4
    "g1_inspire_v21_keys": ("state", "actions", ["--image-size", "80x60"], [1]),  # built by conftest, camera `wrist`
}


def _convert(src: Path, out: Path, *args: str) -> int:
    to = [a for f in FORMATS for a in ("--to", f)]
    return main(["convert", str(src), *to, "--out", str(out), "--no-cache", "--workers", "1", *args])


def _source_table(root: Path) -> pa.Table:
    """Every data row of the source dataset, in (episode, frame) order."""
    files = sorted((root / "data").rglob("*.parquet"))
    table = pa.concat_tables([pq.read_table(f) for f in files], promote_options="permissive")
    return table.sort_by([("episode_index", "ascending"), ("frame_index", "ascending")])


def _matrix(table: pa.Table, key: str) -> np.ndarray:
    col = table.column(key).combine_chunks()
    return np.asarray(col.flatten().to_numpy(zero_copy_only=False)).reshape(len(col), -1)


def _info(root: Path) -> dict[str, Any]:
    return dict(json.loads((root / "meta" / "info.json").read_text()))


@pytest.fixture(scope="module", params=sorted(DATASETS))
def converted(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
              lerobot_roots: dict[str, Path]) -> tuple[str, Path, Path]:
    """(dataset name, source root, converted output)."""
    name = request.param
    out = tmp_path_factory.mktemp(name)
    assert _convert(lerobot_roots[name], out, *DATASETS[name][2]) == 0
    return name, lerobot_roots[name], out


def test_info_lists_every_stream_and_the_missing_videos(capsys: pytest.CaptureFixture[str],
                                                        lerobot_roots: dict[str, Path]) -> None:
    for name in DATASETS:
        root = lerobot_roots[name]
        assert main(["info", str(root), "--json"]) == 0
        reports = json.loads(capsys.readouterr().out)
        reports = reports if isinstance(reports, list) else [reports]
        info = _info(root)
        cameras = [k for k, f in info["features"].items() if f["dtype"] == "video"]
        for report in reports:
            channels = {s["channel"]: s for s in report["streams"]}
            assert {"joints/position", "action", "task"} <= set(channels)
            assert len(cameras) == sum(1 for c in channels if c.endswith("/rgb"))
            assert report["tasks"] and not report["skipped"]
        missing = [w for r in reports for w in r["warnings"] if "video file missing" in w]
        on_disk = list(root.rglob("*.mp4"))
        assert len(missing) == len(reports) * len(cameras) - len(on_disk)


def test_every_format_converts_and_checks(converted: tuple[str, Path, Path]) -> None:
    _, _, out = converted
    assert main(["check", str(out)]) == 0
    report = json.loads((out / "export.json").read_text())
    assert report["items"][0]["status"] == "converted"
    assert sorted(f.name for f in out.iterdir() if f.is_dir()) == sorted(FORMATS)


def test_lerobot_output_keeps_values_names_and_action(converted: tuple[str, Path, Path]) -> None:
    name, root, out = converted
    state_key, action_key, options, kept = DATASETS[name]
    source = _source_table(root)
    source = source.filter(pa.compute.is_in(source.column("episode_index"), pa.array(kept)))
    written = _source_table_at(out / "lerobot")
    assert written.num_rows == source.num_rows
    # the source's feature keys are kept: `state`/`actions` stay, lerobot's standard keys stay
    assert np.array_equal(_matrix(written, state_key), _matrix(source, state_key))
    assert np.array_equal(_matrix(written, action_key), _matrix(source, action_key))  # the recorded action, by default
    assert np.array_equal(written.column("frame_index").to_numpy(), source.column("frame_index").to_numpy())
    src_info, out_info = _info(root), json.loads((out / "lerobot" / "meta" / "info.json").read_text())
    for key in (state_key, action_key):
        names, src_names = out_info["features"][key]["names"], feature_names(src_info["features"][key])
        assert len(names) == out_info["features"][key]["shape"][0] == src_info["features"][key]["shape"][0]
        # the source's names when it has them (g1); `names: null` (apple_storage) gets the dimension indices
        assert names == (src_names or [str(i) for i in range(len(names))]), key
    exported = {k for k, f in src_info["features"].items() if f["dtype"] != "video" or "--camera" not in options}
    assert set(out_info["features"]) == exported  # every feature key, cameras included when exported
    assert read_meaning(out / "lerobot") == ActionMeaning("action", "action", "absolute", "", "joints/position")
    videos = {k for k, f in out_info["features"].items() if f["dtype"] == "video"}
    assert {p.parts[-3] for p in (out / "lerobot" / "videos").rglob("*.mp4")} == videos


def _source_table_at(root: Path) -> pa.Table:
    files = sorted((root / "data").rglob("*.parquet"))
    return pa.concat_tables([pq.read_table(f) for f in files])


def test_rlds_and_mcap_keep_the_recorded_action_and_names(converted: tuple[str, Path, Path]) -> None:
    name, root, out = converted
    state_key, action_key, _, kept = DATASETS[name]
    source = _source_table(root)
    names = feature_names(_info(root)["features"][action_key])
    outputs = {"rlds": [out / "rlds" / "robokit" / "1.0.0"], "mcap": sorted((out / "mcap").glob("*.mcap"))}
    for fmt, paths in outputs.items():
        episodes = robokit.open(paths)
        assert len(episodes) == len(kept), fmt
        for ep, index in zip(episodes, kept, strict=True):
            rows = source.filter(pa.compute.equal(source.column("episode_index"), index))
            action = ep["action"]
            assert isinstance(action, NumericStream) and action.names == tuple(names or action.names), fmt
            assert len(action.names) == _info(root)["features"][action_key]["shape"][0], fmt
            assert np.allclose(action.values, _matrix(rows, action_key), atol=1e-6), fmt
            state = ep["joints/position"]
            assert isinstance(state, NumericStream) and np.allclose(state.values, _matrix(rows, state_key), atol=1e-6)


def test_webdataset_and_viam_hold_every_frame(converted: tuple[str, Path, Path]) -> None:
    name, root, out = converted
    _, action_key, camera_option, kept = DATASETS[name]
    source = _source_table(root)
    frames = source.filter(pa.compute.is_in(source.column("episode_index"), pa.array(kept))).num_rows
    meta = json.loads((out / "webdataset" / "dataset.json").read_text())
    text = json.dumps(meta)
    assert all(n in text for n in feature_names(_info(root)["features"][action_key]))
    samples = set()
    for shard in (out / "webdataset").glob("*.tar"):
        with tarfile.open(shard) as tar:
            samples |= {m.name.split(".")[0] for m in tar.getmembers()}
    assert len(samples) == frames
    images = [p for p in (out / "viam-binary").rglob("*") if p.suffix in (".jpg", ".jpeg", ".png")]
    assert len(images) == (0 if camera_option[:2] == ["--camera", "none"] else frames)


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_round_trip_lerobot_keeps_every_column_and_name(name: str, tmp_path: Path,
                                                        lerobot_roots: dict[str, Path]) -> None:
    """LeRobot → robokit → LeRobot, twice: every non-video column (name and values) and every feature (key, dtype,
    shape, dimension names) as in the source. Without cameras, so episodes whose MP4 is missing convert too."""
    root, outputs = lerobot_roots[name], [tmp_path / "once", tmp_path / "twice"]
    for src, out in zip([root, outputs[0] / "lerobot"], outputs, strict=True):
        assert main(["convert", str(src), "--to", "lerobot", "--out", str(out), "--no-cache", "--workers", "1",
                     "--camera", "none"]) == 0
    source = _source_table(root)
    src_features = {k: f for k, f in _info(root)["features"].items() if f["dtype"] != "video"}
    for out in outputs:
        table = _source_table_at(out / "lerobot")
        assert sorted(table.column_names) == sorted(source.column_names), out.name
        for column in source.column_names:
            assert table.column(column).to_pylist() == source.column(column).to_pylist(), (out.name, column)
        features = _info(out / "lerobot")["features"]
        assert sorted(features) == sorted(src_features), out.name
        for key, feature in src_features.items():
            assert (features[key]["dtype"], features[key]["shape"]) == (feature["dtype"], feature["shape"]), key
            if key in (DATASETS[name][0], DATASETS[name][1]):  # the source's names (g1's nested list flattened);
                indices = [str(i) for i in range(feature["shape"][0])]  # `names: null` (apple) → the indices
                assert feature_names(features[key]) == (feature_names(feature) or indices), key


def test_keys_fall_back_to_lerobots_when_episodes_disagree_or_a_stream_is_derived(
        tmp_path: Path, lerobot_roots: dict[str, Path]) -> None:
    keys = lerobot_roots["reachy2_apple_storage_v30_keys"]
    base = ["--to", "lerobot", "--no-cache", "--workers", "1", "--camera", "none"]
    assert main(["convert", str(APPLE), str(keys), "--out", str(tmp_path / "mixed"), *base]) == 0
    info = _info(tmp_path / "mixed" / "lerobot")
    assert info["total_episodes"] == 6 and {"observation.state", "action"} <= set(info["features"])
    report = json.dumps(json.loads((tmp_path / "mixed" / "export.json").read_text()))
    assert "different feature keys" in report and "standard keys" in report
    # a derived action is not the source's `actions` feature: lerobot's key, beside the kept `state`
    assert main(["convert", str(keys), "--out", str(tmp_path / "delta"), *base,
                 "--action", "joints/position_delta"]) == 0
    features = _info(tmp_path / "delta" / "lerobot")["features"]
    assert {"state", "action"} <= set(features) and "actions" not in features
    assert features["action"]["info"]["kind"] == "delta"
    # a state taken from the `actions` feature is not read back as a state under that key: lerobot's key
    assert main(["convert", str(keys), "--out", str(tmp_path / "swap"), *base, "--state", "action"]) == 0
    assert {"observation.state", "actions"} <= set(_info(tmp_path / "swap" / "lerobot")["features"])


def test_missing_videos_skip_each_episode_with_the_file_named(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert _convert(APPLE, tmp_path / "o") != 0
    report = json.loads((tmp_path / "o" / "export.json").read_text())
    text = json.dumps(report) + capsys.readouterr().err
    assert "video file missing" in text and "observation.image/chunk-000/file-000.mp4" in text


def test_task_text_from_the_pandas_index() -> None:
    """lerobot's converter stored the task text as the pandas index (`__index_level_0__`), not as a `task` column."""
    tasks = pq.read_table(APPLE / "meta" / "tasks.parquet")
    assert tasks.column_names == ["task_index", "__index_level_0__"]
    for ep in robokit.open(APPLE):
        assert ep["task"].values == ("place the apple in the plate",)  # type: ignore[attr-defined]


def _tasks_variant(tmp_path: Path, table: pa.Table) -> Path:
    root = tmp_path / "variant"
    shutil.copytree(APPLE, root)
    pq.write_table(table, root / "meta" / "tasks.parquet")
    return root


@pytest.mark.parametrize("layout", ["index_named_task", "column", "no_task_index"])
def test_tasks_parquet_variants(tmp_path: Path, layout: str) -> None:
    text = "Pick the orange cube and place it in the box"
    if layout == "index_named_task":  # what lerobot 0.6 writes
        pandas = {"index_columns": ["task"], "columns": [{"name": "task_index", "field_name": "task_index"},
                                                          {"name": "task", "field_name": "task"}]}
        table = pa.table({"task_index": [0], "task": [text]}).replace_schema_metadata(
            {"pandas": json.dumps(pandas)})
    elif layout == "column":
        table = pa.table({"task": [text], "task_index": pa.array([0], pa.int64())})
    else:
        table = pa.table({"task": [text]})
    (ep,) = robokit.open(_tasks_variant(tmp_path, table))[:1]
    assert ep["task"].values == (text,)  # type: ignore[attr-defined]


def test_metadata_errors_name_the_file_and_the_field(tmp_path: Path) -> None:
    root = _tasks_variant(tmp_path, pa.table({"task_index": [0], "what": [1]}))
    with pytest.raises(SourceError, match=r"meta/tasks\.parquet: task: no task text"):
        robokit.open(root)
    info = json.loads((root / "meta" / "info.json").read_text())
    (root / "meta" / "info.json").write_text(json.dumps({**info, "fps": "thirty"}))
    with pytest.raises(SourceError, match=r"meta/info\.json: fps: expected a positive integer"):
        robokit.open(root)
    g1 = tmp_path / "g1"
    shutil.copytree(G1, g1)
    (g1 / "meta" / "tasks.jsonl").write_text('{"task_index": 0}\n')
    with pytest.raises(SourceError, match=r"meta/tasks\.jsonl: line 1: task: missing"):
        robokit.open(g1)


def test_undeclared_column_is_listed_and_rlds_states_the_missing_action(tmp_path: Path) -> None:
    root = tmp_path / "no_action"
    shutil.copytree(APPLE, root)
    info = json.loads((root / "meta" / "info.json").read_text())
    del info["features"]["action"]
    (root / "meta" / "info.json").write_text(json.dumps(info))
    (ep, *_) = robokit.open(root)
    assert "action" not in ep.streams
    assert [(s.topic, s.reason) for s in ep.skipped] == [("action", "column not declared in meta/info.json features")]
    out = tmp_path / "o"
    assert main(["convert", str(root), "--to", "rlds", "--out", str(out), "--no-cache", "--workers", "1",
                 "--camera", "none"]) == 0
    report = json.loads((out / "export.json").read_text())
    assert "No action: the source recorded none" in json.dumps(report)
    (back, *_) = robokit.open(out / "rlds" / "robokit" / "1.0.0")
    assert "joints/position_delta" not in back.streams


def test_broken_video_is_named_and_camera_none_converts(tmp_path: Path) -> None:
    root = tmp_path / "g1"
    shutil.copytree(G1, root)
    video = next(root.rglob("*.mp4"))
    video.write_bytes(video.read_bytes()[: video.stat().st_size // 3])  # a partial download
    episodes = robokit.open(root)
    with pytest.raises(SourceError, match=r"episode_000001\.mp4 cannot be decoded"):
        next(iter(episodes[1]["cam_high/rgb"].frames()))
    assert _convert(root, tmp_path / "none", "--camera", "none") == 0  # without cameras both convert
    written = json.loads((tmp_path / "none" / "lerobot" / "meta" / "info.json").read_text())
    assert written["total_episodes"] == 2 and written["total_frames"] == 519
