"""A small seeded fuzz budget over every reader kind (`make fuzz` runs thousands), and the damaged inputs
issue 14 named, each converted through the real CLI: typed errors and warnings, never a traceback."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest

from robokit.cli import main
from tests.fuzz.harness import FINDINGS, fuzz, summary
from tests.fuzz.seeds import Seed, build_seeds

BUDGET = 20  # cases in `make test`: one or two per seed kind of robokit's own (the fixtures run in `make fuzz`)


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Seed]:
    return {s.kind: s for s in build_seeds(tmp_path_factory.mktemp("fuzz-seeds"), with_fixtures=False)}


def test_fuzz_budget(seeds: dict[str, Seed], tmp_path: Path) -> None:
    root = next(iter(seeds.values())).root.parent
    outcomes = fuzz(BUDGET, rng_seed=14, seed_dir=root, timeout=60.0, with_fixtures=False)
    findings = [o for o in outcomes if o.status in FINDINGS]
    assert not findings, summary(outcomes) + "\n" + "\n".join(
        f"{o.status} {o.seed} {o.mutation}: {o.detail}\n{o.observed.get('traceback', '')}" for o in findings)


def _case(seed: Seed, tmp_path: Path) -> Path:
    shutil.copytree(seed.root, tmp_path / "in")
    return tmp_path / "in" / seed.path


def _convert(tmp_path: Path, *args: str, fmt: str = "webdataset") -> tuple[int, dict[str, object]]:
    out = tmp_path / "out"
    rc = main(["convert", *args, "--to", fmt, "--out", str(out), "--no-cache", "--workers", "1", "-q"])
    record = out / "export.json"
    return rc, json.loads(record.read_text()) if record.is_file() else {}


@pytest.fixture(scope="module")
def two_episodes(seeds: dict[str, Seed], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LeRobot dataset of two episodes (one per sample recording, each in MP4 files of its own)."""
    bags = [seeds["manifest"].root / "rec", seeds["ros2-mcap"].root / "episode"]
    out = tmp_path_factory.mktemp("two")
    assert main(["convert", *map(str, bags), "--to", "lerobot", "--out", str(out), "--no-cache", "--fps", "10",
                 "--video-file-mb", "0.00001", "--workers", "1", "-q"]) == 0
    return out / "lerobot"


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
@pytest.mark.parametrize("fmt", ["lerobot", "webdataset"])
def test_lerobot_bad_video_skips_its_episode(two_episodes: Path, tmp_path: Path, damage: str, fmt: str) -> None:
    dataset = tmp_path / "lerobot"
    shutil.copytree(two_episodes, dataset)
    videos = sorted((dataset / "videos").rglob("*.mp4"))
    victim = videos[0]
    if damage == "missing":
        victim.unlink()
    else:
        data = bytearray(victim.read_bytes())
        data[len(data) // 4:] = bytes(len(data) - len(data) // 4)
        victim.write_bytes(bytes(data))
    _, job = _convert(tmp_path, str(dataset), fmt=fmt)
    assert job, "export.json is written"
    report = job["formats"][fmt]  # type: ignore[index]
    assert report["status"] == "written" and report["episodes"] == 1
    assert [episode for episode, _ in report["skipped"]] == ["lerobot_000000"]
    assert any("skipped episode lerobot_000000" in w for w in job["warnings"])  # type: ignore[attr-defined]


def test_damaged_viam_sequence_zip(seeds: dict[str, Seed], tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                   ) -> None:
    target = _case(seeds["viam-sequence"], tmp_path)
    for z in target.rglob("*.zip"):
        data = bytearray(z.read_bytes())
        data[len(data) // 2:] = bytes(len(data) - len(data) // 2)
        z.write_bytes(bytes(data))
    rc, job = _convert(tmp_path, str(target))
    assert rc != 0 and "damaged Viam sequence export" in job["items"][0]["reason"]  # type: ignore[index]
    assert main(["info", str(target)]) != 0
    assert "not a readable zip" in capsys.readouterr().err


def test_rlds_splits_of_wrong_type(seeds: dict[str, Seed], tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                   ) -> None:
    target = _case(seeds["rlds"], tmp_path)
    info_path = next(target.rglob("dataset_info.json"))
    info = json.loads(info_path.read_text())
    info["splits"] = -1
    info_path.write_text(json.dumps(info))
    assert main(["info", str(target)]) != 0
    assert "splits must be a list" in capsys.readouterr().err


@pytest.mark.parametrize(("change", "message"), [
    ({"episode_id": 7}, "episode_id must be a non-empty string"),
    ({"segment": {"start": -1}}, "neither ns nor ISO-8601"),
    ({"segment": {"start": -1, "end": 10}}, "before 1970"),
    ({"segment": {"start": 0, "end": 2**70}}, "does not fit"),
    ({"task": ["a"]}, "task must be a non-empty string"),
    ({"tags": [[1]]}, "tags must be an object or a list of strings"),
])
def test_manifest_line_of_wrong_types(seeds: dict[str, Seed], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      change: dict[str, object], message: str) -> None:
    manifest = _case(seeds["manifest"], tmp_path)
    line = {**json.loads(manifest.read_text()), **change}
    manifest.write_text(json.dumps(line) + "\n")
    rc, _ = _convert(tmp_path, "--manifest", str(manifest))
    assert rc == 2
    err = capsys.readouterr().err
    assert message in err and "manifest.jsonl:1" in err


def test_deeply_nested_json_and_yaml(seeds: dict[str, Seed], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    deep = "[" * 5000 + "]" * 5000
    manifest = _case(seeds["manifest"], tmp_path)
    manifest.write_text(f'{{"data_path": "rec", "tags": {deep}}}\n')
    assert _convert(tmp_path, "--manifest", str(manifest))[0] == 2
    assert "nested too deeply" in capsys.readouterr().err
    scene = tmp_path / "deep" / "scene.yaml"
    scene.parent.mkdir()
    scene.write_text(f"objects: {deep}\n")
    assert main(["convert", str(scene), "--to", "usd", "--out", str(tmp_path / "o"), "--no-cache"]) != 0
    dataset = tmp_path / "in" / "rec"
    (dataset / "metadata.yaml").write_text(f"rosbag2_bagfile_information: {deep}\n")
    assert main(["info", str(dataset)]) != 0


def test_ply_header_claiming_billions_of_vertices(seeds: dict[str, Seed], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    target = _case(seeds["ply-splat"], tmp_path)
    data = target.read_bytes()
    count = data.split(b"element vertex ")[1].split(b"\n")[0]
    target.write_bytes(data.replace(b"element vertex " + count, b"element vertex 3000000000", 1))
    rc, _ = _convert(tmp_path, str(target), fmt="usd")
    assert rc != 0
    assert "PLY header claims 3000000000 vertex" in capsys.readouterr().err


def test_point_cloud_ply_is_named_a_point_cloud(seeds: dict[str, Seed], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    target = _case(seeds["ply-points"], tmp_path)
    rc, _ = _convert(tmp_path, str(target), fmt="usd")
    assert rc != 0
    err = capsys.readouterr().err
    assert "is a point cloud (50 points, no faces)" in err and "unexpected length" not in err


def test_overflowing_splats_are_dropped_and_counted(seeds: dict[str, Seed], tmp_path: Path) -> None:
    from robokit.converters.scene.ply import read_header

    target = _case(seeds["ply-splat"], tmp_path)
    header = read_header(target)
    vertex = header.element("vertex")
    assert vertex is not None
    names = [p for p, _ in vertex.properties]
    data = bytearray(target.read_bytes())
    row = 4 * len(names)
    for i, prop in ((0, "scale_0"), (1, "x")):  # exp(1e38) overflows; a NaN position
        value = 1e38 if prop == "scale_0" else float("nan")
        struct.pack_into("<f", data, header.data_offset + i * row + 4 * names.index(prop), value)
    target.write_bytes(bytes(data))
    rc, job = _convert(tmp_path, str(target), fmt="usd")
    assert rc == 0
    warnings = " ".join(job["warnings"])  # type: ignore[arg-type]
    assert f"dropped 2 of {vertex.count} splats" in warnings
    usda = " ".join(p.read_text(errors="replace") for p in (tmp_path / "out" / "usd").rglob("*.usda"))
    assert "inf" not in usda.replace("info", "")
