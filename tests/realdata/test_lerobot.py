"""Real LeRobot datasets written by lerobot (tests/realdata/lerobot, see SOURCES.md): info → convert to every
episode format → check, values compared with the source Parquet, and LeRobot → robokit → LeRobot round trips."""

from __future__ import annotations

import io
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
from robokit.converters.lerobot.features import channel, feature_names
from robokit.converters.lerobot.layout import DEFAULT_FEATURES
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
    "gr1_picknplace_v20": ("observation.state", "action", ["--camera", "none"], [0, 1]),  # GR00T demo data, no MP4s
}
# What a round trip cannot give back as the source had it: lerobot's bookkeeping columns are written as LeRobot v3.0
# declares them (`timestamp` float32 = frame_index / fps, `frame_index` present). GR00T's v2.0 demo data has no
# `frame_index` column and float64 timestamps from 0.05 s with float32 noise (0.04999995…).
REDERIVED: dict[str, set[str]] = {"gr1_picknplace_v20": {"timestamp", "frame_index"}}


def _convert(src: Path, out: Path, *args: str) -> int:
    to = [a for f in FORMATS for a in ("--to", f)]
    return main(["convert", str(src), *to, "--out", str(out), "--no-cache", "--workers", "1", *args])


def _source_table(root: Path) -> pa.Table:
    """Every data row of the source dataset, in (episode, frame) order."""
    files = sorted((root / "data").rglob("*.parquet"))
    table = pa.concat_tables([pq.read_table(f) for f in files], promote_options="permissive")
    within = "frame_index" if "frame_index" in table.column_names else "index"  # GR00T's v2.0 has no frame_index
    return table.sort_by([("episode_index", "ascending"), (within, "ascending")])


def _matrix(table: pa.Table, key: str) -> np.ndarray:
    col = table.column(key).combine_chunks()
    flat = col.flatten() if pa.types.is_list(col.type) or pa.types.is_fixed_size_list(col.type) else col
    return np.asarray(flat.to_numpy(zero_copy_only=False)).reshape(len(col), -1)


def _frame_index(table: pa.Table) -> np.ndarray:
    """The table's frame indices; row order within each episode when it has no `frame_index` (GR00T's v2.0)."""
    if "frame_index" in table.column_names:
        return np.asarray(table.column("frame_index").to_numpy())
    episodes = table.column("episode_index").to_numpy()
    starts = np.flatnonzero(np.r_[True, episodes[1:] != episodes[:-1]])
    return np.arange(len(episodes)) - np.repeat(starts, np.diff(np.r_[starts, len(episodes)]))


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
    assert np.array_equal(written.column("frame_index").to_numpy(), _frame_index(source))
    src_info, out_info = _info(root), json.loads((out / "lerobot" / "meta" / "info.json").read_text())
    for key in (state_key, action_key):  # dtype, shape and names as the source gives them (nested, null)
        feature, src_feature = out_info["features"][key], src_info["features"][key]
        assert (feature["dtype"], feature["shape"]) == (src_feature["dtype"], src_feature["shape"]), key
        assert feature.get("names", "absent") == src_feature.get("names", "absent"), key
    exported = {k for k, f in src_info["features"].items() if f["dtype"] != "video" or "--camera" not in options}
    assert set(out_info["features"]) == exported | {"frame_index"}  # every feature key, cameras when exported
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


def _extras(root: Path, state_key: str, action_key: str) -> dict[str, dict[str, Any]]:
    """The source's features robokit has no role for (GR00T's `next.reward`, `next.done`, `annotation.*`)."""
    return {k: f for k, f in _info(root)["features"].items()
            if f["dtype"] not in ("video", "image") and k not in DEFAULT_FEATURES and k not in (state_key, action_key)}


def test_extras_reach_rlds_webdataset_and_mcap(converted: tuple[str, Path, Path]) -> None:
    """Every extra is a step field (RLDS), a sample member (WebDataset) and a numeric topic (MCAP), values as in the
    source, with its source key, dtype and names in the format's metadata."""
    name, root, out = converted
    state_key, action_key, _, kept = DATASETS[name]
    extras = _extras(root, state_key, action_key)
    source = _source_table(root)
    rows = source.filter(pa.compute.is_in(source.column("episode_index"), pa.array(kept)))
    rlds_meta = json.loads((out / "rlds" / "robokit" / "1.0.0" / "metadata.json").read_text()).get("extras", {})
    wds_keys = json.loads((out / "webdataset" / "dataset.json").read_text())["keys"]
    assert sorted(m["feature"] for m in rlds_meta.values()) == sorted(extras)
    for key, feature in extras.items():
        field = key.replace(".", "_")
        assert rlds_meta[field]["names"] == feature.get("names") and rlds_meta[field]["dtype"] == feature["dtype"]
        assert wds_keys[f"{field}.npy"]["feature"] == key and wds_keys[f"{field}.npy"]["dtype"] == feature["dtype"]
        for fmt, paths in {"rlds": [out / "rlds" / "robokit" / "1.0.0"],
                           "mcap": sorted((out / "mcap").glob("*.mcap"))}.items():
            values = np.concatenate([ep[channel(key)].values for ep in robokit.open(paths)])  # type: ignore[attr-defined]
            assert np.allclose(values, _matrix(rows, key).astype(np.float64), atol=1e-6), (fmt, key)
    with tarfile.open(sorted((out / "webdataset").glob("*.tar"))[0]) as tar:
        first = tar.getmembers()[0].name.split(".", 1)[0]  # the first sample's members, by extension
        members = {m.name.split(".", 1)[1]: m for m in tar.getmembers() if m.name.split(".", 1)[0] == first}
        for key, feature in extras.items():
            data = tar.extractfile(members[f"{key.replace('.', '_')}.npy"])
            assert data is not None and np.load(io.BytesIO(data.read())).dtype == np.dtype(feature["dtype"]), key


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_round_trip_lerobot_keeps_every_column_and_name(name: str, tmp_path: Path,
                                                        lerobot_roots: dict[str, Path]) -> None:
    """LeRobot → robokit → LeRobot, twice: every non-video column (name and values) and every feature (key, dtype,
    shape, `names` exactly as given: null, absent, nested) as in the source, but the columns in REDERIVED.
    Without cameras, so episodes whose MP4 is missing convert too."""
    root, outputs = lerobot_roots[name], [tmp_path / "once", tmp_path / "twice"]
    rederived = REDERIVED.get(name, set())
    for src, out in zip([root, outputs[0] / "lerobot"], outputs, strict=True):
        assert main(["convert", str(src), "--to", "lerobot", "--out", str(out), "--no-cache", "--workers", "1",
                     "--camera", "none"]) == 0
    source = _source_table(root)
    src_features = {k: f for k, f in _info(root)["features"].items() if f["dtype"] != "video"}
    for out in outputs:
        table = _source_table_at(out / "lerobot")
        assert sorted(set(table.column_names) - rederived) == sorted(set(source.column_names) - rederived), out.name
        for column in set(source.column_names) - rederived:
            assert table.column(column).to_pylist() == source.column(column).to_pylist(), (out.name, column)
        assert np.array_equal(table.column("frame_index").to_numpy(), _frame_index(source))
        features = _info(out / "lerobot")["features"]
        assert sorted(features) == sorted(set(src_features) | {"frame_index"}), out.name
        for key, feature in src_features.items():
            if key in DEFAULT_FEATURES:  # as LeRobot v3.0 declares them
                assert features[key] == DEFAULT_FEATURES[key], key
                assert key in rederived or (features[key]["dtype"], features[key]["shape"]) == (
                    feature["dtype"], feature["shape"]), key
            else:  # verbatim, but the action's `info` (what robokit's written action is)
                assert {k: v for k, v in features[key].items() if k != "info"} == feature, key


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


def test_dict_names_and_added_extras_round_trip_exactly(tmp_path: Path) -> None:
    """A dict of names (`{"motors": [...]}`) stays a dict; a vector extra with `names: null`, a bool and an int8 extra
    keep their dtype, shape, names and values (apple_storage with columns added, as other recorders write them); a
    second state key (`state` beside `observation.state`) is read as its own channel and kept too."""
    root = tmp_path / "src"
    shutil.copytree(APPLE, root)
    info = _info(root)
    info["features"]["observation.state"]["names"] = {"motors": [f"joint_{i}" for i in range(19)]}
    info["features"]["observation.environment_state"] = {"dtype": "float32", "shape": [3], "names": None}
    info["features"]["next.done"] = {"dtype": "bool", "shape": [1], "names": None}
    info["features"]["annotation.phase"] = {"dtype": "int8", "shape": [1]}
    info["features"]["state"] = {"dtype": "float32", "shape": [19], "names": None}
    (root / "meta" / "info.json").write_text(json.dumps(info))
    for path in (root / "data").rglob("*.parquet"):
        table = pq.read_table(path)
        n, rng = table.num_rows, np.random.default_rng(3)
        env = pa.FixedSizeListArray.from_arrays(pa.array(rng.normal(size=n * 3).astype(np.float32)), 3)
        table = (table.append_column("observation.environment_state", env)
                 .append_column("next.done", pa.array(np.arange(n) % 7 == 0))
                 .append_column("annotation.phase", pa.array((np.arange(n) // 50).astype(np.int8)))
                 .append_column("state", pa.FixedSizeListArray.from_arrays(
                     pa.array(rng.normal(size=n * 19).astype(np.float32)), 19)))
        pq.write_table(table, path)
    out = tmp_path / "out"
    assert main(["convert", str(root), "--to", "lerobot", "--out", str(out), "--no-cache", "--workers", "1",
                 "--camera", "none"]) == 0
    written = _info(out / "lerobot")["features"]
    extras = ("observation.environment_state", "next.done", "annotation.phase", "state")
    for key in ("observation.state", *extras):
        assert {k: v for k, v in written[key].items() if k != "info"} == info["features"][key], key
    source, table = _source_table(root), _source_table_at(out / "lerobot")
    for key in ("observation.state", *extras):
        assert table.column(key).to_pylist() == source.column(key).to_pylist(), key
    assert table.schema.field("annotation.phase").type == pa.int8()
