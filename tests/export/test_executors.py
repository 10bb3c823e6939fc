from __future__ import annotations

import json
from pathlib import Path

import fsspec
import pytest

from robokit.export import export

OPTS = {"fps": 10, "action": "joints/position_delta", "crf": 40}


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_process_workers_equal_serial_output(sample_dir: Path, tmp_path: Path) -> None:
    bags = sorted(sample_dir.iterdir())
    export(bags, ["lerobot"], tmp_path / "serial", OPTS, use_cache=False)
    job = export(bags, ["lerobot"], tmp_path / "ray", OPTS, use_cache=False, executor="ray")
    assert job.formats["lerobot"].status == "written"
    serial, ray = _tree(tmp_path / "serial" / "lerobot"), _tree(tmp_path / "ray" / "lerobot")
    assert serial.keys() == ray.keys()
    for name in serial:  # Parquet and JSON are byte-identical; MP4s carry no timestamps either
        assert serial[name] == ray[name], name


def test_remote_destination_is_uploaded(sample_bag: Path) -> None:
    job = export([sample_bag], ["lerobot"], "memory://robokit-test/out", OPTS, use_cache=False)
    fs = fsspec.filesystem("memory")
    assert fs.exists("/robokit-test/out/lerobot/meta/info.json")
    record = json.loads(fs.cat("/robokit-test/out/export.json"))
    assert record["dest"] == "memory://robokit-test/out" and job.status == "done"


def test_unknown_executor(sample_bag: Path, tmp_path: Path) -> None:
    from robokit.errors import OptionError

    with pytest.raises(OptionError, match="executor 'spark'"):
        export([sample_bag], ["lerobot", "lerobot"], tmp_path, OPTS, executor="spark")
