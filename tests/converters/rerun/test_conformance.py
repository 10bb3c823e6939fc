"""Rerun (rerun-sdk, the `rerun` CLI) loads what robokit writes: `--to rerun` recordings and robokit's MCAP.

Needs rerun-sdk (conformance environment); skipped cleanly without it.
"""

from __future__ import annotations

import io
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import PIL.Image
import pytest

import robokit
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.export import export
from robokit.timeline import Episode, EpisodeMeta, ImageStream, NumericStream
from robokit.timeline.images import ArrayFrameSource

pytestmark = [pytest.mark.conformance, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
OPTIONS = {"fps": 15, "action": "joints/position_delta"}
JOINTS = ["shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3", "gripper"]


def rerun_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The `rerun` command of the rerun-sdk installed beside this Python."""
    return subprocess.run([sys.executable, "-m", "rerun", *args], capture_output=True, text=True, timeout=300)


def columns(path: Path) -> tuple[dict[str, dict[str, list[Any]]], dict[str, set[str]], Any]:
    """({entity: {component: one value per row}}, {entity: timelines}, the recording's store entry); a row holding
    one instance gives that instance, a row of several (joint scalars, names) their list."""
    from rerun.chunk import RrdReader

    reader = RrdReader(path)
    values: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    timelines: dict[str, set[str]] = defaultdict(set)
    for chunk in reader.stream().to_chunks():
        batch = chunk.to_record_batch()
        timelines[chunk.entity_path] |= set(chunk.timeline_names)
        for name in batch.schema.names:
            if ":" in name:
                rows = batch.column(name).to_pylist()
                values[chunk.entity_path][name] += [r[0] if isinstance(r, list) and len(r) == 1 else r for r in rows]
    return values, timelines, reader.recordings()[0]


@pytest.fixture(scope="module")
def rrd(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("rerun")
    out = tmp_path_factory.mktemp("rerun")
    episodes = robokit.open(sorted(sample_dir.iterdir()))
    get_converter("rerun").write(episodes, out, WriterOptions(**OPTIONS))  # type: ignore[arg-type]
    return out / "rerun"


def test_every_recording_verifies_and_checks(rrd: Path) -> None:
    files = sorted(rrd.iterdir())
    assert [p.name for p in files] == ["episode_000.rrd", "episode_001.rrd"]
    result = rerun_cli("rrd", "verify", *map(str, files))
    assert result.returncode == 0, result.stderr
    assert get_converter("rerun").check(rrd) == []


def test_recording_holds_every_channel_with_its_meaning(rrd: Path, sample_bag: Path) -> None:
    values, timelines, store = columns(rrd / "episode_000.rrd")
    assert store.recording_id == "episode_000" and store.application_id == "robokit"
    joints = values["/joints/position"]
    frames = len(joints["Scalars:scalars"])
    assert joints["SeriesLines:names"] == [JOINTS] and all(len(row) == 7 for row in joints["Scalars:scalars"])
    assert timelines["/joints/position"] == {"time", "frame_index"}
    for entity in ("/joints/velocity", "/joints/effort", "/joint_commands/position", "/derived/joint_velocity",
                   "/derived/action"):
        assert len(values[entity]["Scalars:scalars"]) == frames and values[entity]["SeriesLines:names"], entity
    wrist = values["/cameras/wrist/rgb"]
    recorded = robokit.open(sample_bag)[0].streams["wrist/rgb"]
    assert isinstance(recorded, ImageStream)
    jpegs = {f.data for f in recorded.frames()}
    assert len(wrist["EncodedImage:blob"]) == frames and set(wrist["EncodedImage:media_type"]) == {"image/jpeg"}
    assert all(bytes(blob) in jpegs for blob in wrist["EncodedImage:blob"])  # recorded JPEG bytes kept
    front = values["/cameras/front/rgb"]  # raw frames: encoded once (PNG by default, lossless)
    assert set(front["EncodedImage:media_type"]) == {"image/png"} and len(front["EncodedImage:blob"]) == frames
    assert front["Pinhole:parent_frame"] == ["front_camera_optical"]
    assert front["Pinhole:resolution"] == [[160.0, 120.0]] and front["CoordinateFrame:frame"]
    assert values["/tf/tool0"]["Transform3D:parent_frame"][0] == "base_link"
    assert len(values["/tf/tool0"]["Transform3D:quaternion"]) == frames
    assert values["/tf/front_camera_optical"]["Transform3D:child_frame"] == ["front_camera_optical"]
    assert values["/task"]["TextLog:text"] == ["pick up the red cube and place it in the bin"]
    assert any(t.startswith("episode: ") for t in values["/episode/events"]["TextLog:text"])
    assert values["/derived/ee_path"]["InstancePoses3D:translations"]
    assert any("resampled to 15 fps" in t for t in values["/robokit/log"]["TextLog:text"])


def test_frame_index_counts_ticks(rrd: Path) -> None:
    frame_index_of(rrd / "episode_000.rrd", "/joints/position", frames=None)


def frame_index_of(path: Path, entity: str, frames: int | None) -> None:
    """The frame_index of `entity` counts 0, 1, 2, ... (as many as `frames`, when given)."""
    from rerun.chunk import RrdReader

    for chunk in RrdReader(path).stream().to_chunks():
        if chunk.entity_path == entity and "frame_index" in chunk.timeline_names:
            index = chunk.to_record_batch().column("frame_index").to_pylist()
            assert index == list(range(frames or len(index)))
            return
    pytest.fail(f"no {entity} on frame_index")


def test_blueprint_has_cameras_plots_and_scene(rrd: Path) -> None:
    from rerun.chunk import RrdReader

    reader = RrdReader(rrd / "episode_000.rrd")
    (blueprint,) = reader.blueprints()
    views = []
    for chunk in reader.stream(store=blueprint).to_chunks():
        batch = chunk.to_record_batch()
        if "ViewBlueprint:class_identifier" in batch.schema.names:
            views += [row[0] for row in batch.column("ViewBlueprint:class_identifier").to_pylist()]
    assert sorted(set(views)) == ["2D", "3D", "TextLog", "TimeSeries"]
    assert views.count("2D") == 2  # one per camera


def test_parallel_output_holds_the_same_data(sample_dir: Path, tmp_path: Path) -> None:
    """Rerun stamps rows, chunks and blueprint views with random ids, so bytes differ; `rerun rrd compare` finds the
    same data (in any order: Rerun's batcher is asynchronous)."""
    pytest.importorskip("rerun")
    bags = sorted(sample_dir.iterdir())
    export(bags, ["rerun"], tmp_path / "serial", OPTIONS, use_cache=False, workers=1)
    job = export(bags, ["rerun"], tmp_path / "parallel", OPTIONS, use_cache=False, workers=2)
    assert job.formats["rerun"].episodes == 2
    for name in ("episode_000.rrd", "episode_001.rrd"):
        result = rerun_cli("rrd", "compare", "--unordered", str(tmp_path / "serial/rerun" / name),
                           str(tmp_path / "parallel/rerun" / name))
        assert result.returncode == 0, result.stdout + result.stderr


def test_odd_names_depth_and_unstorable_cameras(tmp_path: Path) -> None:
    """Names with spaces and dots become escaped entity paths; float depth in metres is logged as an
    EncodedDepthImage of 16-bit PNG millimetres; a float colour camera cannot be stored: skipped with a warning."""
    pytest.importorskip("rerun")
    t = 1_767_225_600_000_000_000 + np.arange(5) * 100_000_000
    depth = [np.full((6, 8), 1.25, dtype=np.float32)] * 5
    floats = [np.zeros((6, 8, 3), dtype=np.float32)] * 5
    streams = [NumericStream("joints/position", t, np.arange(10.0).reshape(5, 2), ("a", "b"), "rad"),
               NumericStream("arm left/torque.sensor", t, np.ones((5, 1)), ("t",), "N·m"),
               ImageStream("sim/depth", t, source=ArrayFrameSource(depth), width=8, height=6, encoding="32FC1"),
               ImageStream("sim/hdr", t, source=ArrayFrameSource(floats), width=8, height=6, encoding="32FC3")]
    ep = Episode(EpisodeMeta("test://odd", "odd id/1"), {s.name: s for s in streams})
    result = get_converter("rerun").write([ep], tmp_path, WriterOptions())  # recorded timestamps, 10 Hz grid
    assert result.files == ["odd_id_1.rrd"] and any("sim/hdr: not written" in w for w in result.warnings)
    assert not any("sim/depth" in w for w in result.warnings if "not written" in w)
    assert get_converter("rerun").check(tmp_path / "rerun") == []
    values, timelines, store = columns(tmp_path / "rerun" / "odd_id_1.rrd")
    assert store.recording_id == "odd id/1" and timelines["/joints/position"] == {"time", "frame_index"}
    torque = [v for path, v in values.items() if "torque" in path]
    assert len(torque) == 1 and torque[0]["SeriesLines:names"] == ["t"] and len(torque[0]["Scalars:scalars"]) == 5
    blobs = values["/cameras/sim/depth"]["EncodedDepthImage:blob"]
    assert len(blobs) == 5 and not any("hdr" in path for path in values)
    millimetres = np.asarray(PIL.Image.open(io.BytesIO(bytes(blobs[0]))))
    assert millimetres.dtype == np.uint16 and (millimetres == 1250).all()
    frame_index_of(tmp_path / "rerun" / "odd_id_1.rrd", "/joints/position", frames=5)


@pytest.mark.parametrize("encoding", ["protobuf", "ros2"])
def test_robokit_mcap_plays_in_rerun_with_its_meaning(sample_dir: Path, tmp_path: Path, encoding: str) -> None:
    """`rerun mcap check` passes; `rerun mcap convert` gives named Scalars for joints, EncodedImage for cameras,
    Transform3D for TF, Pinhole for calibration and text for the task, in both encodings."""
    pytest.importorskip("rerun")
    episodes = robokit.open([sample_dir / "episode_000"])
    get_converter("mcap").write(episodes, tmp_path, WriterOptions.from_mapping({**OPTIONS, "mcap_encoding": encoding},
                                                                               ("mcap_encoding",)))
    mcap = tmp_path / "mcap" / "episode_000.mcap"
    check = rerun_cli("mcap", "check", str(mcap))
    assert check.returncode == 0 and "error" not in check.stdout.lower(), check.stdout + check.stderr
    converted = tmp_path / "converted.rrd"
    result = rerun_cli("mcap", "convert", str(mcap), "-o", str(converted))
    assert result.returncode == 0, result.stderr
    values, _, _ = columns(converted)
    for topic in ("/joint_states", "/joint_commands", "/derived/action"):
        assert values[f"{topic}/position"]["Scalars:scalars"], topic
    assert values["/joint_states/position"]["SeriesLines:names"][0] == JOINTS
    for camera in ("front", "wrist"):
        assert values[f"/camera/{camera}/image"]["EncodedImage:blob"]
        assert values[f"/camera/{camera}/calibration"]["Pinhole:image_from_camera"]
    assert values["/tf"]["Transform3D:child_frame"] and values["/tf_static"]["Transform3D:child_frame"]
    task = values["/task"].get("TextLog:text") or values["/task"].get("TextDocument:text")
    assert task == ["pick up the red cube and place it in the bin"]
