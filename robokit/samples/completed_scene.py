"""Sample completed scenes (the scene input contract of the reasoning-VLM formats): an H.264 video per camera
and one task file per annotation type, for tests, benchmarks and examples."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from robokit.samples.recording import frame_pixels


def write_video(path: Path, frames: int = 60, fps: int = 15, gop: int = 10, size: tuple[int, int] = (64, 48),
                crf: int = 30, bframes: int = 0) -> Path:
    """An H.264 MP4 of synthetic frames with a keyframe exactly every `gop` frames (no scene-cut keyframes)."""
    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    options = {"g": str(gop), "keyint_min": str(gop), "sc_threshold": "0", "crf": str(crf), "preset": "veryfast",
               "bf": str(bframes)}
    with av.open(str(path), mode="w", format="mp4") as container:
        stream: Any = container.add_stream("libx264", rate=fps, options=options)
        stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
        for i in range(frames):
            frame = av.VideoFrame.from_ndarray(frame_pixels(i, size[0], size[1], 40), format="rgb24")
            frame.pts = i
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return path


def write_task(scene: Path, name: str, task: str, items: Sequence[dict[str, Any]], version: int = 1) -> Path:
    """`task/<name>.json` of `scene`, as an annotation service writes it."""
    path = scene / "task" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"task": task, "version": version, "items": list(items)}, indent=1))
    return path


def write_completed_scene(scene: Path, cameras: Sequence[str] = ("front",), frames: int = 60, fps: int = 15,
                          gop: int = 10, scene_id: str | None = None) -> Path:
    """A scene with a video per camera and one reasoning, caption and MCQ item on the first camera."""
    for camera in cameras:
        write_video(scene / "media" / f"{camera}.mp4", frames, fps, gop)
    if scene_id is not None:
        (scene / "scene.json").write_text(json.dumps({"scene_id": scene_id}))
    cam, end = cameras[0], round(frames / fps / 2, 3)
    write_task(scene, "reasoning", "reasoning", [
        {"id": "r1", "camera": cam, "start": 0.0, "end": end, "question": "Is the square moving?",
         "reasoning": "Its position changes between frames.", "answer": "Yes"}])
    write_task(scene, "caption", "caption", [{"id": "c1", "camera": cam, "caption": "A red square drifts."}])
    write_task(scene, "mcq", "mcq", [
        {"id": "m1", "camera": cam, "start": 0.0, "end": end, "question": "Which colour is the square?",
         "choices": ["blue", "red", "green"], "answer": "red"}])
    return scene
