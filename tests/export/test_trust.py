"""The export cache never serves stale output, inputs are never harmed, killed and concurrent runs stay safe."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from robokit.export import export
from robokit.export.cache import ExportCache
from robokit.export.folder import LOCK, DestinationError

OPTS = {"fps": 10}


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_cached_outputs_are_independent_copies(sample_bag: Path, tmp_path: Path) -> None:
    cache = ExportCache(tmp_path / "cache")
    export([sample_bag], ["mcap"], tmp_path / "a", OPTS, cache_root=cache.root)
    job = export([sample_bag], ["mcap"], tmp_path / "b", OPTS, cache_root=cache.root)
    assert job.formats["mcap"].status == "cached"
    (entry,) = cache.entries()
    stored = _files(entry.path / "output")
    for out in (tmp_path / "a" / "mcap", tmp_path / "b" / "mcap"):
        for path in (p for p in out.rglob("*") if p.is_file()):
            assert path.stat().st_nlink == 1, path
            path.write_bytes(b"edited in place")
    assert _files(entry.path / "output") == stored
    export([sample_bag], ["mcap"], tmp_path / "c", OPTS, cache_root=cache.root)
    assert _files(tmp_path / "c" / "mcap") == stored


@pytest.mark.parametrize("failure", ["enospc", "not-a-folder"])
def test_a_full_or_unwritable_cache_is_a_warning(sample_bag: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 failure: str) -> None:
    root = tmp_path / "cache"
    if failure == "enospc":
        def full(src: Path, dst: Path) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))

        monkeypatch.setattr("robokit.export.cache._copy_tree", full)
    else:
        root.write_text("a file where the cache folder should be")
    job = export([sample_bag], ["mcap"], tmp_path / "out", OPTS, cache_root=root)
    assert job.status == "done" and job.formats["mcap"].status == "written"
    record = json.loads((tmp_path / "out" / "export.json").read_text())
    assert any("not cached" in w for w in record["warnings"]), record["warnings"]
    if failure == "enospc":
        assert ExportCache(root).entries() == [] and not list(root.glob(".*partial*"))


def test_viam_binary_is_keyed_by_its_destination(sample_bag: Path, tmp_path: Path) -> None:
    opts = {**OPTS, "cameras": ("front",), "only_jsonl": True}
    export([sample_bag], ["viam-binary"], tmp_path / "a", opts, cache_root=tmp_path / "cache")
    job = export([sample_bag], ["viam-binary"], tmp_path / "b", opts, cache_root=tmp_path / "cache")
    assert job.formats["viam-binary"].status == "written"
    line = json.loads((tmp_path / "b" / "viam-binary" / "dataset.jsonl").read_text().splitlines()[0])
    assert line["image_path"].startswith((tmp_path / "b").as_posix())


def test_overwrite_refuses_to_replace_its_own_input(sample_bag: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    export([sample_bag], ["mcap"], out, OPTS, use_cache=False)
    (source,) = (out / "mcap").glob("*.mcap")
    before = source.read_bytes()
    with pytest.raises(DestinationError, match=r"lies inside .*mcap.*overwrite"):
        export([source], ["mcap"], out, {**OPTS, "fps": 5, "overwrite": True}, use_cache=False)
    assert source.read_bytes() == before


def test_overwrite_leaves_exactly_what_export_json_records(sample_bag: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    export([sample_bag], ["mcap", "viam-binary"], out, {**OPTS, "only_jsonl": True}, use_cache=False)
    (out / "notes").mkdir()  # not a format folder of the earlier export: kept
    job = export([sample_bag], ["mcap"], out, {**OPTS, "fps": 5, "overwrite": True}, use_cache=False)
    assert set(job.formats) == {"mcap"}
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) \
        == ["export.json", "export.log", "mcap", "notes"]
    assert "removed viam-binary/" in (out / "export.log").read_text()


def _hold_lock(out: Path) -> subprocess.Popen[str]:
    """Another process holding the export lock of `out`, as a running export does."""
    out.mkdir(parents=True, exist_ok=True)
    code = ("import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
            "fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, b'pid %d' % os.getpid()); print('held', flush=True); "
            "time.sleep(600)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(out / LOCK)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_export_into_one_folder_is_refused_while_the_first_runs(sample_bag: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    holder = _hold_lock(out)
    try:
        with pytest.raises(DestinationError, match=rf"being written by another robokit export \(pid {holder.pid}\)"):
            export([sample_bag], ["mcap"], out, OPTS, use_cache=False)
        assert not (out / "mcap").exists() and not (out / "export.json").exists()
    finally:
        holder.kill()  # kill -9: the kernel releases the lock
        holder.wait()
    assert export([sample_bag], ["mcap"], out, OPTS, use_cache=False).formats["mcap"].status == "written"


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _wait(condition: object, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_9_leaves_no_workers_and_the_next_run_removes_its_staging(sample_bag: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.jsonl"
    (tmp_path / "bag").symlink_to(sample_bag, target_is_directory=True)
    manifest.write_text("\n".join(json.dumps({"data_path": "bag", "episode_id": f"ep{i}"}) for i in range(12)))
    out = tmp_path / "out"
    cli = "import sys; from robokit.cli import main; sys.exit(main(sys.argv[1:]))"
    run = subprocess.Popen([sys.executable, "-c", cli, "convert", "--manifest", str(manifest), "--allow-outside",
                            "--to", "lerobot", "--out", str(out), "--fps", "10", "--workers", "2", "--no-cache", "-q"],
                           env={**os.environ, "ROBOKIT_CACHE": str(tmp_path / "cache")})
    try:
        staged = _wait(lambda: list(out.glob(".lerobot.partial-*")) and len(_descendants(run.pid)) >= 3)
        workers = _descendants(run.pid)  # the forkserver and its workers
        assert staged and run.poll() is None, "the export ended before it could be killed"
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    assert _wait(lambda: not any(Path(f"/proc/{p}").exists() for p in workers)), "workers outlived the export"
    assert list(out.glob(".lerobot.partial-*"))
    job = export([sample_bag], ["mcap"], out, OPTS, use_cache=False)
    assert job.status == "done" and not list(out.glob(".*.partial-*"))
    assert "left behind by an interrupted export" in (out / "export.log").read_text()
