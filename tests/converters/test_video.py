from __future__ import annotations

import io
import os
import threading
import time
from typing import Any

import av
import numpy as np
import pytest

from robokit.converters.video import PAIR_GOP_PARAMS, VideoEncoder, VideoSettings
from robokit.timeline.video import obus

FPS = 15


def test_h264_has_no_b_frames() -> None:
    assert VideoSettings(codec="h264").options()["bf"] == "0"
    assert "bf" not in VideoSettings(codec="av1").options()


@pytest.mark.parametrize("size", [(160, 96), (640, 480)])
def test_gop_2_encodes_the_same_frames_without_unused_picture_buffers(size: tuple[int, int]) -> None:
    """`PAIR_GOP_PARAMS` only drop buffers: libsvtav1 codes every frame as it does with its defaults (SVT-AV1 4.3 on
    describes the shallower mini-GOP in its sequence headers, 2 bytes of each keyframe; 4.1 wrote the same bytes)."""
    settings = VideoSettings(gop=2, threads=1)
    assert settings.options()["svtav1-params"] == ":".join(("lp=1", *PAIR_GOP_PARAMS))
    width, height = size
    texture = np.random.default_rng(width).integers(0, 255, (height, width, 3), dtype=np.uint8)
    frames = [np.roll(texture, 4 * i, axis=1) for i in range(24)]  # motion, so frames predict from each other

    def encoded(options: dict[str, str]) -> tuple[list[bytes], list[bytes]]:
        """The coded frames without their sequence headers, and the decoded pictures."""
        buffer = io.BytesIO()
        with av.open(buffer, "w", format="mp4") as container:
            stream = container.add_stream("libsvtav1", rate=FPS, options=options)
            stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
            for i, pixels in enumerate(frames):
                frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
                frame.pts = i
                container.mux(stream.encode(frame))
            container.mux(stream.encode(None))
        buffer.seek(0)
        with av.open(buffer) as container:
            packets = [bytes(p) for p in container.demux(video=0) if p.size]
        coded = [b"".join(p[a:b] for kind, a, b in obus(p) if kind != 1) for p in packets]
        buffer.seek(0)
        with av.open(buffer) as container:
            pictures = [f.to_ndarray().tobytes() for f in container.decode(video=0)]
        return coded, pictures

    assert encoded(settings.options()) == encoded({**settings.options(), "svtav1-params": "lp=1"})
    assert "svtav1-params" not in VideoSettings(gop=4).options()


def test_odd_frame_sizes_are_refused_clearly() -> None:
    from robokit.errors import ConversionError

    with pytest.raises(ConversionError, match="4x3 frames: yuv420p video needs an even width and height"):
        VideoEncoder(io.BytesIO(), 4, 3, FPS, VideoSettings())


def test_encoder_threads_take_the_lowest_priority_first_and_never_exceed_the_slots() -> None:
    """Queued encodes run lowest priority first (an export's earlier episodes before later ones), at most
    `encoder_slots()` at once; a cancelled one never runs and an error reaches its caller."""
    from robokit.converters import video

    video.set_encoder_slots(2)
    try:
        gate, lock = threading.Event(), threading.Lock()
        started: list[str] = []
        running = [0, 0]  # now, most at once

        def work(name: str) -> str:
            with lock:
                running[0] += 1
                running[1] = max(running)
                started.append(name)
            gate.wait(5)
            time.sleep(0.01)
            with lock:
                running[0] -= 1
            if name == "bad":
                raise ValueError(name)
            return name

        busy = [video.encode_later((0, i), work, f"busy{i}") for i in range(2)]  # hold both threads
        while running[0] < 2:
            time.sleep(0.001)
        later = video.encode_later((2, 0), work, "episode 2")
        cancelled = video.encode_later((1, 5), work, "cancelled")
        first = video.encode_later((1, 0), work, "episode 1")
        bad = video.encode_later((1, 1), work, "bad")
        assert cancelled.cancel()
        gate.set()
        assert [f.result(5) for f in (*busy, first, later)] == ["busy0", "busy1", "episode 1", "episode 2"]
        with pytest.raises(ValueError, match="bad"):
            bad.result(5)
        assert sorted(started[:2]) == ["busy0", "busy1"] and sorted(started[2:4]) == ["bad", "episode 1"], started
        assert started[4:] == ["episode 2"] and running[1] == 2
    finally:
        video.set_encoder_slots(os.cpu_count() or 1)


def test_encode_batch_queues_a_few_calls_at_a_time_and_stops_at_the_first_failure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Results come in call order; no more than the threads plus one are queued or running at once (a long episode's
    segments never all wait in the queue); a failure is raised and the calls not yet queued never run."""
    from robokit.converters import video

    lock = threading.Lock()
    ran: list[int] = []
    queued = [0, 0]  # now, most at once
    real = video.encode_later

    def counted(priority: tuple[int, ...], fn: Any, *args: Any) -> Any:
        with lock:
            queued[0] += 1
            queued[1] = max(queued)
        future = real(priority, fn, *args)
        future.add_done_callback(lambda _: less())
        return future

    def less() -> None:
        with lock:
            queued[0] -= 1

    def work(i: int) -> int:
        time.sleep(0.002)
        with lock:
            ran.append(i)
        if i == 30:
            raise ValueError(f"call {i}")
        return i * i

    monkeypatch.setattr(video, "encode_later", counted)
    video.set_encoder_slots(2)
    try:
        assert video.EncodeBatch(7, [(work, (i,)) for i in range(25)]).results() == [i * i for i in range(25)]
        assert queued[1] == 3 and sorted(ran) == list(range(25))
        ran.clear()
        failing = video.EncodeBatch(7, [(work, (i,)) for i in range(30, 200)])
        with pytest.raises(ValueError, match="call 30"):
            failing.results()
        assert 30 in ran and len(ran) <= 3, ran  # those queued with it ran or were cancelled; no more
    finally:
        video.set_encoder_slots(os.cpu_count() or 1)
