from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import trimesh

from robokit.cli import main
from robokit.converters import consumers, get_converter
from robokit.converters.consumers import Consumer, consumer_of
from robokit.converters.options import WriterOptions
from robokit.converters.scene import load_scene
from robokit.timeline import ArrayFrameSource, Episode, EpisodeMeta, EventStream, ImageStream, NumericStream


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """USD and MJCF outputs of a small one-mesh scene (convex hulls only: fast)."""
    root = tmp_path_factory.mktemp("check")
    mesh = root / "crate.stl"
    trimesh.creation.box((0.4, 0.3, 0.3)).apply_translation((0, 0, 0.15)).export(mesh)
    options = WriterOptions(extra={"collision": "convex-hull"})
    scene = load_scene([mesh], [], options)
    for name in ("usd", "mjcf"):
        get_converter(name).write_scene(scene, root / "out", options)  # type: ignore[attr-defined]
    return root / "out"


def test_all_pass(outputs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(outputs)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["folder", "format", "result", "checked", "by", "reason"]
    rows = {line.split()[1]: line.split()[2] for line in lines[1:]}
    assert rows == {"mjcf": "pass", "usd": "pass"}


def test_a_format_folder_itself(outputs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(outputs / "usd")]) == 0
    assert "usd" in capsys.readouterr().out


def test_failures_give_reasons_and_exit_1(outputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mjcf").mkdir()
    (tmp_path / "mjcf" / "scene.xml").write_text("<mujoco><worldbody><geom type='sphere'/></worldbody></mujoco>")
    (tmp_path / "usd").mkdir()
    assert main(["check", str(tmp_path), str(outputs)]) == 1
    captured = capsys.readouterr()
    fails = [line for line in captured.out.splitlines() if " FAIL " in line]
    assert len(fails) == 2
    assert any("could not compile" in line for line in fails) and any("no scene.usda" in line for line in fails)
    assert "2 of 4 failed" in captured.err


def test_no_format_folder_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no output folder of a known format" in err and "usd" in err and "Traceback" not in err
    assert main(["check", str(tmp_path / "nope")]) == 2


def _episode(episode_id: str) -> Episode:
    """Ten 10 Hz frames of two joints and a 16x12 camera, in memory."""
    n = 10
    t = np.arange(n, dtype=np.int64) * 100_000_000 + 1_000_000_000
    frames = [np.full((12, 16, 3), 20 * i, dtype=np.uint8) for i in range(n)]
    return Episode(EpisodeMeta(f"mem://{episode_id}", episode_id), {
        "joints/position": NumericStream("joints/position", t, np.arange(n * 2).reshape(n, 2) * 0.1, ("a", "b"), "rad"),
        "cam/rgb": ImageStream("cam/rgb", t, source=ArrayFrameSource(frames), width=16, height=12),
        "task": EventStream("task", t[:1], values=("wave",)),
    })


@pytest.fixture(scope="module")
def datasets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every episode format written from two small in-memory episodes (LeRobot without video: fast)."""
    out = tmp_path_factory.mktemp("datasets")
    episodes = [_episode("ep0"), _episode("ep1")]
    for name in EPISODE_FORMATS:
        cameras = () if name == "lerobot" else None
        get_converter(name).write(episodes, out, WriterOptions(cameras=cameras, action="joints/position_delta"))
    return out


EPISODE_FORMATS = ("lerobot", "rlds", "webdataset", "mcap", "viam-binary", "viam-sequence")


def test_every_row_says_who_checked_it(datasets: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(datasets)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["folder", "format", "result", "checked", "by", "reason"]
    by = {line.split()[1]: line.split(maxsplit=3)[3] for line in lines[1:]}
    assert set(by) == set(EPISODE_FORMATS)
    for name in EPISODE_FORMATS:
        consumer = consumer_of(name)
        assert consumer is not None
        wanted = f"robokit + {consumer.name}" if consumer.available() else \
            f"robokit only ({consumer.name} not installed)"
        assert by[name] == wanted


def test_strict_fails_without_the_real_consumer(datasets: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(consumers.BY_FORMAT, "webdataset", Consumer("nonexistent", ("robokit_no_such_module",)))
    assert main(["check", str(datasets / "webdataset")]) == 0
    assert "robokit only (nonexistent not installed)" in capsys.readouterr().out
    assert main(["check", "--strict", str(datasets / "webdataset")]) == 1
    assert "--strict: nonexistent is not installed" in capsys.readouterr().out


@pytest.mark.parametrize(("fmt", "remove", "reason"), [
    ("lerobot", "meta/tasks.parquet", "missing meta/tasks.parquet"),
    ("lerobot", "meta/stats.json", "missing meta/stats.json"),
    ("lerobot", "meta/episodes", "missing meta/episodes"),
    ("lerobot", "data/chunk-000/file-000.parquet", "missing data"),
    ("rlds", "*/*/*train.tfrecord-00000-of-*", "missing shard"),
    ("webdataset", "*-000000.tar", "missing or not named"),
    ("viam-binary", "data/*", "missing"),
    ("viam-sequence", "*.zip", "expected one"),
])
def test_a_missing_required_file_fails(datasets: Path, tmp_path: Path, fmt: str, remove: str, reason: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / fmt
    shutil.copytree(datasets / fmt, copy)
    victims = sorted(copy.glob(remove))
    assert victims, remove
    for victim in victims[:1]:
        shutil.rmtree(victim) if victim.is_dir() else victim.unlink()
    assert main(["check", str(copy)]) == 1
    out = capsys.readouterr().out
    assert " FAIL " in out and reason in out, out


def test_an_unfinished_mcap_fails(datasets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "mcap"
    shutil.copytree(datasets / "mcap", copy)
    victim = sorted(copy.glob("*.mcap"))[0]
    victim.write_bytes(victim.read_bytes()[:-200])  # the summary and footer cut off
    assert main(["check", str(copy)]) == 1
    assert "not a finished MCAP" in capsys.readouterr().out


@pytest.mark.conformance
def test_strict_passes_with_lerobot_and_it_loads_the_action_meaning(datasets: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """In the lerobot environment: the real consumer validates, and reads the action's meaning."""
    dataset_module = pytest.importorskip("lerobot.datasets.lerobot_dataset")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    assert main(["check", "--strict", str(datasets / "lerobot")]) == 0
    ds = dataset_module.LeRobotDataset("robokit/check", root=datasets / "lerobot")
    info = ds.meta.features["action"]["info"]
    assert (info["kind"], info["source"], info["channel"]) == ("delta", "joints/position", "joints/position_delta")
    assert ds[0]["action"].shape == (2,)

