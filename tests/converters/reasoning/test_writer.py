"""Completed scenes → cosmos-reason-v1.0 and tao-vl-reason-v1.0: the scene contract, clips, skips, CLI names."""

from __future__ import annotations

import json
import shutil
import tarfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import av
import pytest

from robokit.cli import main
from robokit.converters import get_converter
from robokit.export import export
from robokit.export.job import NothingConverted
from robokit.samples.completed_scene import write_completed_scene, write_task, write_video
from tests.conftest import LEROBOT_OPTIONS

BOTH = ["cosmos-reason-v1.0", "tao-vl-reason-v1.0"]


def annotations(out: Path, fmt: str = "cosmos-reason-v1.0") -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((out / fmt / "annotations.json").read_text())
    return data


def packets(path: Path) -> list[tuple[bytes, bool, float, float]]:
    """(bytes, keyframe, pts s, dts s) of every video packet in decode order."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        tb = float(stream.time_base or 0)
        return [(bytes(p), bool(p.is_keyframe), p.pts * tb, p.dts * tb) for p in container.demux(stream) if p.size]


def test_both_formats_in_one_pass(tmp_path: Path) -> None:
    scene = write_completed_scene(tmp_path / "scene_0001", cameras=("front", "top"), scene_id="kitchen-7")
    job = export([scene], BOTH, tmp_path / "out", use_cache=False)
    assert job.status == "done"
    cosmos = annotations(tmp_path / "out")
    assert cosmos == annotations(tmp_path / "out", "tao-vl-reason-v1.0")
    by_id = {e["id"]: e for e in cosmos}
    assert set(by_id) == {"kitchen-7-r1", "kitchen-7-c1", "kitchen-7-m1"}
    human, gpt = by_id["kitchen-7-r1"]["conversations"]
    assert human == {"from": "human", "value": "<video>\nIs the square moving?"}
    assert gpt == {"from": "gpt", "value": "<think>\nIts position changes between frames.\n</think>\n\n"
                                           "<answer>\nYes\n</answer>"}
    mcq = by_id["kitchen-7-m1"]["conversations"]
    assert mcq[0]["value"] == "<video>\nWhich colour is the square?\nA. blue\nB. red\nC. green"
    assert mcq[1]["value"] == "B"
    assert by_id["kitchen-7-c1"]["conversations"][1]["value"] == "A red square drifts."
    meta = by_id["kitchen-7-r1"]["metadata"]
    assert (meta["scene"], meta["camera"], meta["start"], meta["end"], meta["source"]) == \
        ("kitchen-7", "front", 0.0, 2.0, "media/front.mp4")
    assert meta["source_version"].startswith("s2:") and meta["clip"] == "copied"
    # the reasoning and MCQ items share one span: one clip, written once
    assert by_id["kitchen-7-r1"]["video"] == by_id["kitchen-7-m1"]["video"]
    clips = sorted(p.name for p in (tmp_path / "out/cosmos-reason-v1.0/clips").iterdir())
    assert len(clips) == 2 and {e["video"].split("/")[-1] for e in cosmos} == set(clips)
    with tarfile.open(tmp_path / "out/tao-vl-reason-v1.0/videos.tar.gz") as tar:
        assert {m.name for m in tar.getmembers()} == {e["video"] for e in cosmos}
    for fmt in BOTH:
        assert get_converter(fmt).check(tmp_path / "out" / fmt) == []
    record = json.loads((tmp_path / "out/export.json").read_text())
    assert record["items"][0]["kind"] == "annotated-scene"
    assert record["formats"]["cosmos-reason-v1.0"]["contents"] == {"scenes": 1, "items": 3, "clips": 2,
                                                                   "copied clips": 2}
    assert sorted(record["items"][0]["files"]) == BOTH


def test_clip_is_a_stream_copy_from_the_keyframe_before_start(tmp_path: Path) -> None:
    """Packets from the last keyframe at or before start to end are the source's, byte for byte."""
    scene = tmp_path / "s"
    source = write_video(scene / "media/front.mp4", frames=60, fps=15, gop=10)
    write_task(scene, "cap", "caption", [{"id": "x", "camera": "front", "start": 1.3, "end": 2.5, "caption": "c"}])
    export([scene], ["cosmos-reason-v1.0"], tmp_path / "out", use_cache=False)
    (entry,) = annotations(tmp_path / "out")
    clip = [p[:2] for p in packets(tmp_path / "out/cosmos-reason-v1.0" / entry["video"])]
    # keyframes every 10 frames at 15 fps: 1.3 s falls after frame 10 (0.667 s); 2.5 s ends before frame 38
    assert clip == [p[:2] for p in packets(source)[10:38]]
    assert clip[0][1]
    assert entry["metadata"]["clip_start"] == pytest.approx(10 / 15, abs=1e-6)
    assert entry["metadata"]["clip_frames"] == 28


def test_clip_copy_of_a_video_with_b_frames(tmp_path: Path) -> None:
    """With B-frames, packets are copied in decode order from the keyframe while they decode before `end`;
    every frame of the span decodes from the clip."""
    scene = tmp_path / "s"
    source = packets(write_video(scene / "media/front.mp4", frames=60, fps=15, gop=12, bframes=2))
    write_task(scene, "cap", "caption", [{"id": "x", "camera": "front", "start": 1.5, "end": 3.0, "caption": "c"}])
    export([scene], ["cosmos-reason-v1.0"], tmp_path / "out", use_cache=False)
    (entry,) = annotations(tmp_path / "out")
    path = tmp_path / "out/cosmos-reason-v1.0" / entry["video"]
    first = max(i for i, p in enumerate(source) if p[1] and p[2] <= 1.5 + 1e-9)
    expected = [p[0] for p in source[first:] if p[3] < 3.0 - 1e-9]
    assert [p[0] for p in packets(path)] == expected
    assert entry["metadata"]["clip_start"] == pytest.approx(source[first][2], abs=1e-6)
    with av.open(str(path)) as c:
        decoded = len(list(c.decode(video=0)))
    assert decoded == len(expected)
    span_frames = sum(1 for p in source if entry["metadata"]["clip_start"] - 1e-9 <= p[2] < 3.0 - 1e-9)
    assert decoded >= span_frames


def test_skips_are_warned_and_recorded(tmp_path: Path) -> None:
    good = write_completed_scene(tmp_path / "good")
    write_task(good, "odd", "grounding", [{"id": "g", "camera": "front"}])
    write_task(good, "more", "caption", [
        {"id": "nocam", "camera": "rear", "caption": "x"},
        {"id": "late", "camera": "front", "start": 3.0, "end": 9.0, "caption": "x"},
        {"id": "bad", "camera": "front"}])
    no_tasks = tmp_path / "no_tasks"
    write_video(no_tasks / "media/front.mp4", frames=10)
    no_media = tmp_path / "no_media"
    write_task(no_media, "cap", "caption", [{"id": "x", "camera": "front", "caption": "x"}])
    manifest = tmp_path / "scenes.jsonl"
    manifest.write_text("".join(json.dumps({"data_path": p.name}) + "\n" for p in (good, no_tasks, no_media))
                        .replace('"good"', '"good", "episode_id": "e1"'))
    job = export([], BOTH, tmp_path / "out", manifest=manifest, use_cache=False)
    assert job.status == "done"
    log = (tmp_path / "out/export.log").read_text()
    for expected in ("unknown task type 'grounding'", "item 'nocam' skipped: camera 'rear' is not in the scene",
                     "item 'late' skipped: span 3-9 s lies outside", "item 'bad' skipped: 'caption' must be",
                     "skipped " + str(no_tasks), "scene no_tasks: no task files",
                     "skipped " + str(no_media), "scene no_media: no media",
                     "manifest key(s) episode_id do not apply to a completed scene; ignored"):
        assert expected in log
    record = json.loads((tmp_path / "out/export.json").read_text())
    assert [i["status"] for i in record["items"]] == ["converted", "skipped", "skipped"]
    assert any("'nocam' skipped" in w for w in record["items"][0]["warnings"])
    assert len(annotations(tmp_path / "out")) == 3


def test_nothing_to_export_fails(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    write_video(empty / "media/front.mp4", frames=10)
    with pytest.raises(NothingConverted):
        export([empty], BOTH, tmp_path / "out", use_cache=False)
    assert main(["convert", str(empty), "--to", "cosmos-reason-v1.0", "--out", str(tmp_path / "o2")]) == 1


def test_service_flags_and_task_filter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_completed_scene(tmp_path / "scene_0001")
    write_completed_scene(tmp_path / "scene_0002")
    manifest = tmp_path / "completed-scenes.jsonl"
    manifest.write_text('{"data_path": "scene_0001"}\n{"data_path": "scene_0002"}\n')
    out = tmp_path / "training"
    code = main(["convert", "--input-file", str(manifest), "--training-export-format", "cosmos-reason-v1.0",
                 "--training-export-format", "tao-vl-reason-v1.0", "--training-export-dir", str(out),
                 "--training-export-task", "reasoning", "--training-export-task", "mcq", "--no-cache"])
    assert code == 0, capsys.readouterr().err
    tasks = sorted(e["metadata"]["task"] for e in annotations(out, "tao-vl-reason-v1.0"))
    assert tasks == ["mcq", "mcq", "reasoning", "reasoning"]
    assert main(["convert", str(tmp_path / "scene_0001"), "--to", "cosmos-reason-v1.0", "--out",
                 str(tmp_path / "x"), "--training-export-task", "grounding"]) == 2
    assert "training_export_task grounding" in capsys.readouterr().err


def test_training_export_config_section(tmp_path: Path) -> None:
    write_completed_scene(tmp_path / "scene_0001")
    (tmp_path / "scenes.jsonl").write_text('{"data_path": "scene_0001"}\n')
    config = tmp_path / "pipeline.yaml"
    config.write_text(f"training_export:\n  input_file: {tmp_path / 'scenes.jsonl'}\n"
                      f"  training_export_format: [cosmos-reason-v1.0]\n  training_export_dir: {tmp_path / 'out'}\n"
                      "  training_export_task: [caption]\n")
    assert main(["convert", "--config", str(config), "--no-cache"]) == 0
    assert [e["metadata"]["task"] for e in annotations(tmp_path / "out")] == ["caption"]


def test_service_entry_point(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from robokit.cli.training_export import main as service

    monkeypatch.setenv("COLUMNS", "300")
    with pytest.raises(SystemExit) as exit_:
        service(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "--input-file" in out and "--training-export-format" in out and "--clip-fps" in out


def test_reencode_on_request(tmp_path: Path) -> None:
    scene = write_completed_scene(tmp_path / "s", frames=45, fps=15)
    export([scene], ["cosmos-reason-v1.0"], tmp_path / "out", {"clip_fps": 2, "image_size": "32x24"},
           use_cache=False)
    for entry in annotations(tmp_path / "out"):
        meta = entry["metadata"]
        with av.open(str(tmp_path / "out/cosmos-reason-v1.0" / entry["video"])) as c:
            frames = list(c.decode(video=0))
        assert meta["clip"] == "encoded"
        assert len(frames) == meta["clip_frames"] == int((meta["end"] - meta["start"]) * 2)
        assert (frames[0].width, frames[0].height) == (32, 24)


def test_ros2_recording_with_raw_frames(tmp_path: Path, sample_bag: Path) -> None:
    scene = tmp_path / "scene_ros"
    shutil.copytree(sample_bag, scene / "recording" / sample_bag.name)
    write_task(scene, "r", "reasoning", [
        {"id": "a", "camera": "front", "start": 0.5, "end": 2.0, "question": "Q?", "reasoning": "R", "answer": "A"},
        {"id": "b", "camera": "wrist", "question": "Q?", "reasoning": "R", "answer": "A"}])
    export([scene], BOTH, tmp_path / "out", use_cache=False)
    entries = annotations(tmp_path / "out")
    assert [e["metadata"]["camera"] for e in entries] == ["front", "wrist"]
    for entry in entries:
        meta = entry["metadata"]
        assert meta["clip"] == "encoded" and meta["source"] == "recording/episode_000"
        with av.open(str(tmp_path / "out/cosmos-reason-v1.0" / entry["video"])) as c:
            stream = c.streams.video[0]
            assert stream.codec_context.name == "h264"
            frames = list(c.decode(stream))
            rate = float(stream.average_rate or 1)  # PyAV 18.1.1 on: a closed container's streams refuse
        assert len(frames) == meta["clip_frames"] > 10
        assert len(frames) / rate == pytest.approx(meta["end"] - meta["start"], abs=0.1)


@pytest.fixture(scope="module")
def lerobot_h264(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample recordings as a LeRobot dataset with H.264 videos (both episodes in one file per camera)."""
    import robokit

    out = tmp_path_factory.mktemp("lerobot-h264")
    options = replace(LEROBOT_OPTIONS, extra={"codec": "h264"})
    get_converter("lerobot").write(robokit.open(sorted(sample_dir.iterdir())), out, options)
    return out / "lerobot"


def _lerobot_scene(tmp_path: Path, dataset: Path) -> tuple[Path, Path, float]:
    """A scene holding `dataset`, with a caption on the second episode's first camera: (scene, video, offset)."""
    import robokit

    scene = tmp_path / "scene_lerobot"
    shutil.copytree(dataset, scene / "dataset")
    episode = robokit.open(scene / "dataset")[1]  # the second episode starts inside the shared video file
    channel, stream = next(iter(episode.cameras.items()))
    video, offset = stream.source.encoded_video  # type: ignore[union-attr]
    assert offset > 0
    camera = f"{episode.id}/{channel.removesuffix('/rgb')}"
    write_task(scene, "c", "caption", [{"id": "a", "camera": camera, "start": 0.5, "end": 1.5, "caption": "arm"}])
    return scene, video, offset


def test_lerobot_h264_episode_is_copied(tmp_path: Path, lerobot_h264: Path) -> None:
    """A LeRobot episode's camera is a run of a shared MP4: its clips are copied from that file."""
    scene, video, offset = _lerobot_scene(tmp_path, lerobot_h264)
    job = export([scene], ["cosmos-reason-v1.0"], tmp_path / "out", use_cache=False)
    assert job.status == "done"
    (entry,) = annotations(tmp_path / "out")
    meta = entry["metadata"]
    assert meta["clip"] == "copied" and meta["source"] == "dataset"
    assert 0.5 - 1.0 < meta["clip_start"] <= 0.5
    clip = [p[0] for p in packets(tmp_path / "out/cosmos-reason-v1.0" / entry["video"])]
    source = packets(video)
    first = next(i for i, p in enumerate(source) if abs(p[2] - (offset + meta["clip_start"])) < 1e-6)
    assert clip == [p[0] for p in source[first:first + len(clip)]] and len(clip) == meta["clip_frames"] >= 10


def test_lerobot_av1_episode_is_encoded(tmp_path: Path, lerobot_root: Path) -> None:
    """AV1 (LeRobot's default) is not copied: VLM video readers cannot decode it; the log says so."""
    scene, _, _ = _lerobot_scene(tmp_path, lerobot_root)
    export([scene], ["cosmos-reason-v1.0"], tmp_path / "out", use_cache=False)
    (entry,) = annotations(tmp_path / "out")
    assert entry["metadata"]["clip"] == "encoded"
    with av.open(str(tmp_path / "out/cosmos-reason-v1.0" / entry["video"])) as c:
        assert c.streams.video[0].codec_context.name == "h264"
        assert len(list(c.decode(video=0))) == entry["metadata"]["clip_frames"] == 15
    log = (tmp_path / "out/export.log").read_text()
    assert "is av1 video, which the VLM video readers (decord) cannot decode" in log


def test_bad_options_are_usage_errors(tmp_path: Path) -> None:
    scene = write_completed_scene(tmp_path / "s", frames=15)
    for flags in (["--image-size", "33x24"], ["--clip-fps", "0"], ["--clip-fps", "500"]):
        assert main(["convert", str(scene), "--to", "tao-vl-reason-v1.0", "--out", str(tmp_path / "o"), *flags]) == 2
    assert not (tmp_path / "o").exists()


def test_check_finds_a_missing_clip(tmp_path: Path) -> None:
    scene = write_completed_scene(tmp_path / "s", frames=15)
    export([scene], ["cosmos-reason-v1.0"], tmp_path / "out", use_cache=False)
    folder = tmp_path / "out/cosmos-reason-v1.0"
    victim = annotations(tmp_path / "out")[0]["video"]
    (folder / victim).write_bytes(b"not a video")
    assert any("is missing" in p for p in get_converter("cosmos-reason-v1.0").check(folder))


def test_mutated_task_files_never_raise_unexpectedly(tmp_path: Path) -> None:
    """Seeded mutations of task files (bytes and values): the scene reads, or is refused with SceneError."""
    import contextlib
    import random

    from robokit.converters.reasoning.scene import SceneError, read_scene

    scene = write_completed_scene(tmp_path / "s", frames=15)
    originals = {p: p.read_bytes() for p in (scene / "task").iterdir()}
    values: list[Any] = [None, -1, 1e308, float("nan"), "", "x" * 300, [], {}, True, "\x00", ["a"] * 30]
    rng = random.Random(16)
    for _ in range(80):
        path, data = rng.choice(sorted(originals.items()))
        if rng.random() < 0.5:
            raw = bytearray(data)
            for _ in range(rng.randint(1, 8)):
                raw[rng.randrange(len(raw))] = rng.randrange(256)
            path.write_bytes(bytes(raw))
        else:
            doc = json.loads(data)
            target = doc if rng.random() < 0.3 else doc["items"][0]
            target[rng.choice(sorted(target))] = rng.choice(values)
            path.write_text(json.dumps(doc))
        with contextlib.suppress(SceneError):
            read_scene(scene)
        path.write_bytes(data)
