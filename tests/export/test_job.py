from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import robokit
from robokit.errors import OptionError
from robokit.export import ExportError, export
from robokit.export.cache import ExportCache

OPTS = {"fps": 10, "action": "joints/position_delta", "crf": 40}


def test_export_records_items_formats_and_reuses_cache(sample_dir: Path, tmp_path: Path) -> None:
    bags = sorted(sample_dir.iterdir())
    junk = tmp_path / "junk.bag"
    junk.write_text("not a bag")
    job = export([*bags, junk], ["lerobot"], tmp_path / "out", OPTS).wait()
    assert job.status == "done" and job.files
    record = json.loads((tmp_path / "out" / "export.json").read_text())
    assert [i["status"] for i in record["items"]] == ["converted", "converted", "skipped"]
    assert "not a recording" in record["items"][2]["reason"]
    assert record["options"]["fps"] == 10 and record["robokit_version"] == robokit.__version__
    assert "junk.bag" in (tmp_path / "out" / "export.log").read_text()
    again = export([*bags, junk], ["lerobot"], tmp_path / "out", OPTS)
    assert again.formats["lerobot"].status == "up-to-date"
    other = export(bags, ["lerobot"], tmp_path / "other", OPTS)
    assert other.formats["lerobot"].status == "cached"
    a = sorted(p.relative_to(tmp_path / "out" / "lerobot") for p in (tmp_path / "out" / "lerobot").rglob("*"))
    b = sorted(p.relative_to(tmp_path / "other" / "lerobot") for p in (tmp_path / "other" / "lerobot").rglob("*"))
    assert a == b


def test_changed_option_reexports_and_refuses_without_overwrite(sample_bag: Path, tmp_path: Path) -> None:
    export([sample_bag], ["lerobot"], tmp_path / "out", OPTS)
    with pytest.raises(ExportError, match="different export"):
        export([sample_bag], ["lerobot"], tmp_path / "out", {**OPTS, "fps": 5})
    job = export([sample_bag], ["lerobot"], tmp_path / "out", {**OPTS, "fps": 5, "overwrite": True}, use_cache=False)
    assert job.formats["lerobot"].status == "written"


def test_nothing_converts_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match=r"nothing converted.*no such file"):
        export([tmp_path / "missing.mcap"], ["lerobot"], tmp_path / "out", OPTS)
    with pytest.raises(OptionError, match="unknown format 'parquet'"):
        export([tmp_path], ["parquet"], tmp_path / "out")
    with pytest.raises(OptionError, match="unknown option"):
        export([tmp_path], ["lerobot"], tmp_path / "out", {"colour": 1})


def test_manifest_task_filter_and_segment(sample_dir: Path, tmp_path: Path) -> None:
    root = tmp_path / "data"
    shutil.copytree(sample_dir, root)
    (ep,) = robokit.open(root / "episode_000")
    start = ep.start_ns
    lines = [{"data_path": "episode_000", "episode_id": "first", "segment": [start, start + 2_000_000_000]},
             {"data_path": "episode_001", "episode_id": "second"}]
    manifest = root / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(x) for x in lines))
    task = "pick up the red cube and place it in the bin"
    job = export([], ["lerobot"], tmp_path / "out", OPTS, manifest=manifest, task=task)
    assert [i.status for i in job.items] == ["converted", "skipped"]
    assert job.items[1].reason.startswith("task does not match")
    assert job.formats["lerobot"].frames <= 21


def test_cache_entries_listed_and_removed(sample_bag: Path, tmp_path: Path) -> None:
    cache = ExportCache(tmp_path / "cache")
    export([sample_bag], ["lerobot"], tmp_path / "out", OPTS, cache_root=tmp_path / "cache")
    (entry,) = cache.entries()
    assert entry.meta["format"] == "lerobot" and entry.size > 0
    assert cache.remove(entry.key[:6]) == 1 and cache.entries() == []


def test_items_list_the_files_holding_their_episodes_and_their_frames(sample_dir: Path, tmp_path: Path) -> None:
    import trimesh

    bags = sorted(sample_dir.iterdir())
    mesh = tmp_path / "crate.stl"
    trimesh.creation.box((0.4, 0.3, 0.3)).export(mesh)
    formats = ["lerobot", "rlds", "webdataset", "mcap", "viam-binary", "viam-sequence", "mjcf"]
    tiny = {"data_file_mb": 0.001, "video_file_mb": 0.001, "rlds_shard_mb": 0.001, "wds_shard_mb": 256,
            "collision": "convex-hull"}  # one LeRobot file and one TFRecord shard per episode
    job = export([*bags, mesh], formats, tmp_path / "out", {**OPTS, **tiny}, use_cache=False)
    first, second, scene = job.items
    assert scene.kind == "scene" and set(scene.files) == {"mjcf"}
    assert set(first.files["webdataset"]) == set(second.files["webdataset"]) == set(job.formats["webdataset"].files)
    for fmt in formats[:-1]:
        report = job.formats[fmt]
        assert first.frames[fmt] + second.frames[fmt] == report.frames > 0, fmt
        if fmt == "webdataset":  # its smallest shard (256 MB) holds both
            continue
        own_first = set(first.files[fmt]) - set(second.files[fmt])
        own_second = set(second.files[fmt]) - set(first.files[fmt])
        assert own_first and own_second, fmt  # each episode sits in files of its own here
        assert set(first.files[fmt]) | set(second.files[fmt]) == set(report.files), fmt
    assert "data/chunk-000/file-000.parquet" in first.files["lerobot"]
    assert "data/chunk-000/file-001.parquet" in second.files["lerobot"]
    assert "meta/info.json" in first.files["lerobot"] and "meta/info.json" in second.files["lerobot"]


def test_mapped_reads_are_cached_apart_and_reach_the_workers(sample_bag: Path, tmp_path: Path) -> None:
    """A topic mapping renames channels in every worker and is part of the cache key."""
    opts = {"fps": 5}  # not another test's options: the export cache is shared by the session
    export([sample_bag], ["mcap"], tmp_path / "plain", opts)
    mapped = export([sample_bag], ["mcap"], tmp_path / "mapped", opts, mapping={"/joint_states": "arm"}, workers=2)
    assert mapped.formats["mcap"].status == "written"
    (back,) = robokit.open(next((tmp_path / "mapped" / "mcap").rglob("*.mcap")))
    assert "arm/position" in back.streams and "joints/position" not in back.streams
    again = export([sample_bag], ["mcap"], tmp_path / "again", opts, mapping={"/joint_states": "arm"})
    assert again.formats["mcap"].status == "cached"
    with pytest.raises(OptionError, match="bad entry"):
        export([sample_bag], ["mcap"], tmp_path / "bad", opts, mapping={"/joint_states": 3})  # type: ignore[dict-item]


def test_unverified_reads_are_cached_apart(sample_bag: Path, tmp_path: Path) -> None:
    """A `verify=False` export may hold data from an unchecked damaged chunk: never served to a checked run."""
    opts = {"fps": 10}
    export([sample_bag], ["mcap"], tmp_path / "unchecked", opts, verify=False)
    checked = export([sample_bag], ["mcap"], tmp_path / "checked", opts)
    assert checked.formats["mcap"].status == "written"
    assert export([sample_bag], ["mcap"], tmp_path / "again", opts).formats["mcap"].status == "cached"
