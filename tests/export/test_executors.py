from __future__ import annotations

import json
from pathlib import Path

import fsspec
import pytest

from robokit.export import export

OPTS = {"fps": 10, "action": "joints/position_delta", "crf": 40}
EPISODE_FORMATS = ["lerobot", "rlds", "webdataset", "mcap", "viam-binary", "viam-sequence"]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _assert_same_output(a: Path, b: Path, formats: list[str]) -> None:
    for fmt in formats:
        first, second = _tree(a / fmt), _tree(b / fmt)
        assert first.keys() == second.keys(), fmt
        for name in first:  # Parquet, JSON, tar, TFRecord, MCAP and MP4 carry no wall-clock times
            assert first[name] == second[name], f"{fmt}/{name}"


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_parallel_episodes_equal_serial_output(sample_dir: Path, tmp_path: Path, executor: str) -> None:
    bags = sorted(sample_dir.iterdir())
    out = tmp_path / "out"  # one destination: Viam's image paths start with it
    serial = export(bags, EPISODE_FORMATS, out, OPTS, use_cache=False, workers=1)
    out.rename(tmp_path / "serial")
    job = export(bags, EPISODE_FORMATS, out, OPTS, use_cache=False, workers=2, executor=executor)
    assert all(r.status == "written" for r in job.formats.values()), job.formats
    assert [r.episodes for r in job.formats.values()] == [r.episodes for r in serial.formats.values()] == [2] * 6
    _assert_same_output(tmp_path / "serial", out, EPISODE_FORMATS)


def test_overlapped_episodes_equal_serial_output(sample_dir: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """workers=0 on 2 CPUs with 2 cameras: two episodes at once in this process, their segments sharing the slots."""
    from robokit.converters.lerobot import videos

    monkeypatch.setattr(videos, "SEGMENT_FRAMES", 8)
    bags = sorted(sample_dir.iterdir())
    out = tmp_path / "out"
    export(bags, EPISODE_FORMATS, out, OPTS, use_cache=False, workers=1)
    out.rename(tmp_path / "serial")
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    job = export(bags, EPISODE_FORMATS, out, OPTS, use_cache=False, workers=0)
    assert all(r.status == "written" for r in job.formats.values()), job.formats
    _assert_same_output(tmp_path / "serial", out, EPISODE_FORMATS)


def test_remote_destination_is_uploaded(sample_bag: Path) -> None:
    job = export([sample_bag], ["lerobot"], "memory://robokit-test/out", OPTS, use_cache=False)
    fs = fsspec.filesystem("memory")
    assert fs.exists("/robokit-test/out/lerobot/meta/info.json")
    record = json.loads(fs.cat("/robokit-test/out/export.json"))
    assert record["dest"] == "memory://robokit-test/out" and job.status == "done"


def test_unknown_executor(sample_bag: Path, tmp_path: Path) -> None:
    from robokit.errors import OptionError

    with pytest.raises(OptionError, match="executor 'spark'"):
        export([sample_bag], ["lerobot"], tmp_path, OPTS, executor="spark")


@pytest.mark.parametrize(("cpus", "formats", "expected"), [
    (2, ["lerobot"], (1, 2)),  # two cameras keep both cores busy: no worker processes, two episodes overlap
    (8, ["lerobot"], (4, 1)),
    (8, ["lerobot", "rlds"], (4, 1)),
    (8, ["rlds"], (8, 1)),  # no parallel encoders inside an episode: one worker per CPU
    (1, ["lerobot"], (1, 2)),
])
def test_auto_workers_leave_a_core_per_encoder(sample_bag: Path, monkeypatch: pytest.MonkeyPatch, cpus: int,
                                               formats: list[str], expected: tuple[int, int]) -> None:
    from robokit.converters import get_converter
    from robokit.converters.options import WriterOptions
    from robokit.export.executors import auto_parallelism
    from robokit.sources import open_episodes

    episodes = open_episodes(sample_bag)
    assert len(episodes[0].cameras) == 2
    monkeypatch.setattr("os.cpu_count", lambda: cpus)
    convs = [get_converter(name) for name in formats]
    plans = [(conv, conv.plan(episodes, WriterOptions(fps=10))) for conv in convs]  # type: ignore[attr-defined]
    assert auto_parallelism(plans, episodes) == expected


def test_workers_zero_picks_them(sample_bag: Path, tmp_path: Path) -> None:
    job = export([sample_bag], ["lerobot"], tmp_path / "out", OPTS, use_cache=False, workers=0)
    assert job.formats["lerobot"].status == "written"
