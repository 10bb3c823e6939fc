"""Constant-frame-rate MP4 with PyAV: frames encoded one at a time on shared encoder threads (segments are joined by
`mp4.VideoConcatenator`)."""

from __future__ import annotations

import itertools
import math
import os
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Generic, TypeVar

import av
import numpy as np

from robokit import heap
from robokit.errors import ConversionError, OptionError

# user-facing codec name -> (PyAV encoder, canonical decoder name as stored in metadata)
CODECS = {"av1": ("libsvtav1", "av1"), "h264": ("libx264", "h264")}
MAX_CRF = {"av1": 63, "h264": 51}  # libx264 silently clamps higher values to 51
MAX_FPS = {"av1": 240}  # libsvtav1 refuses to open above it
MAX_GOP = 1000  # keyframe interval in frames
X264_PRESETS = ("ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow",
                "placebo")
SVTAV1_PRESETS = tuple(str(p) for p in range(14))
# libsvtav1 with a keyframe every 2 frames (LeRobot's default): no lookahead and a 4-frame mini-GOP, not its 32,
# drop picture buffers such a GOP never fills. The same coded frames (tested; SVT-AV1 4.3 on marks the mini-GOP in
# its sequence headers); 42 MiB less per 640x480 encoder with SVT-AV1 4.1 (100 -> 58), 8 with 4.3 (61 -> 53).
PAIR_GOP_PARAMS = ("lookahead=0", "hierarchical-levels=2")
T = TypeVar("T")


_Work = tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]  # a future, the function and its arguments


class _Encoders:
    """This process's encoder threads, one per slot (a CPU, or a worker process's share of them), taking queued
    work lowest priority first: episodes and segments encoded at once keep every core busy, never run more
    encoders (and their memory) than there are cores, and an earlier episode never waits behind a later one."""

    def __init__(self, count: int) -> None:
        self.count = max(1, count)
        self._queue: queue.PriorityQueue[tuple[tuple[float, ...], int, _Work | None]] = queue.PriorityQueue()
        self._tickets = itertools.count()  # first come, first served among equal priorities
        self._threads = 0
        self._lock = threading.Lock()

    def submit(self, priority: tuple[int, ...], fn: Callable[..., T], *args: Any) -> Future[T]:
        """`fn(*args)` on an encoder thread once no queued work of lower `priority` waits."""
        future: Future[T] = Future()
        self._queue.put((priority, next(self._tickets), (future, fn, args)))
        with self._lock:
            if self._threads < self.count:
                self._threads += 1
                threading.Thread(target=self._work, name=f"robokit-encoder-{self._threads}", daemon=True).start()
        return future

    def stop(self) -> None:
        """End the threads once the queue holds no work (the sentinels sort after every priority)."""
        for _ in range(self._threads):
            self._queue.put(((math.inf,), next(self._tickets), None))

    def _work(self) -> None:
        while (work := self._queue.get()[2]) is not None:
            future, fn, args = work
            if future.set_running_or_notify_cancel():  # else cancelled while queued: its episode has failed
                try:
                    future.set_result(fn(*args))
                except BaseException as exc:  # re-raised by result() in the episode's thread
                    future.set_exception(exc)
                heap.release()  # the segment's encoder and frames are freed: a long episode stays at a segment's


_encoders = _Encoders(os.cpu_count() or 1)


def set_encoder_slots(count: int) -> None:
    """Let `count` encoders run at once in this process (called where no encoder runs: a worker's start, a task's)."""
    global _encoders
    if count != _encoders.count:
        _encoders.stop()
        _encoders = _Encoders(count)


def encoder_slots() -> int:
    """How many encoders may run at once in this process."""
    return _encoders.count


def encode_later(priority: tuple[int, ...], fn: Callable[..., T], *args: Any) -> Future[T]:
    """Run `fn(*args)`, which encodes one video, on one of this process's encoder threads: lowest `priority`
    first (an export passes (episode, segment rank)), then first come."""
    return _encoders.submit(priority, fn, *args)


class EncodeBatch(Generic[T]):
    """Calls run on this process's encoder threads with priority (`order`, index), at most one more than there are
    threads queued or running at once: a long episode's hundreds of segments never wait in the queue, each with its
    future, all at once (the next is queued as one ends, on its thread, before that thread takes other work, so
    `order` keeps its place). The first failure stops the rest; those running end."""

    def __init__(self, order: int, calls: Sequence[tuple[Callable[..., T], tuple[Any, ...]]]) -> None:
        self._order, self._calls = order, calls
        self._results: list[T | None] = [None] * len(calls)
        self._next = 0  # the next call to queue
        self._live: dict[Future[T], int] = {}  # queued or running, with their call's index
        self._error: BaseException | None = None
        self._stopped = False
        self._changed = threading.Condition()
        for _ in range(min(len(calls), encoder_slots() + 1)):
            with self._changed:
                future = self._queue_next()
            if future is not None:
                future.add_done_callback(self._done)

    def results(self) -> list[T]:
        """Every call's result in call order, once all have ended; raises the first failure."""
        try:
            with self._changed:
                self._changed.wait_for(lambda: not self._live)
        except BaseException:
            self.stop()
            raise
        if self._error is not None:
            raise self._error
        return self._results  # type: ignore[return-value]  # every call ended without error: all set

    def stop(self) -> None:
        """Queue no more calls, cancel those queued, and wait for those running."""
        with self._changed:
            self._stopped = True
        self._cancel_queued()
        with self._changed:
            self._changed.wait_for(lambda: not self._live)

    def _queue_next(self) -> Future[T] | None:
        """Queue the next call unless all are queued or the batch stopped (the lock held)."""
        if self._stopped or self._next == len(self._calls):
            return None
        fn, args = self._calls[self._next]
        future = encode_later((self._order, self._next), fn, *args)
        self._live[future] = self._next
        self._next += 1
        return future

    def _done(self, future: Future[T]) -> None:
        with self._changed:
            index = self._live[future]
            if not future.cancelled():
                error = future.exception()
                if error is None:
                    self._results[index] = future.result()
                elif self._error is None:
                    self._error, self._stopped = error, True
            following = self._queue_next()  # before this one leaves `_live`: never empty while calls remain
            del self._live[future]
            self._changed.notify_all()
            stopped = self._stopped
        if following is not None:
            following.add_done_callback(self._done)
        if stopped:
            self._cancel_queued()

    def _cancel_queued(self) -> None:
        """Cancel the queued calls, outside the lock (a cancelled future's callback takes it)."""
        with self._changed:
            live = list(self._live)
        for future in live:
            future.cancel()


@dataclass(frozen=True)
class VideoSettings:
    """Encoder settings: codec (`av1` via libsvtav1, or `h264`), crf, GOP size, preset, pixel format."""

    codec: str = "av1"
    crf: int = 30
    gop: int = 2
    preset: int | str | None = None  # None: 12 for libsvtav1, "veryfast" for libx264
    pix_fmt: str = "yuv420p"
    threads: int = 0  # 0: let the encoder decide

    def __post_init__(self) -> None:
        if self.codec not in CODECS:
            raise OptionError(f"codec {self.codec!r}: expected one of {', '.join(CODECS)}")
        if not 0 <= self.crf <= MAX_CRF[self.codec]:
            raise OptionError(f"crf {self.crf}: expected 0 to {MAX_CRF[self.codec]} for {self.codec}")
        if not 1 <= self.gop <= MAX_GOP:
            raise OptionError(f"gop {self.gop}: expected 1 to {MAX_GOP}")
        presets = X264_PRESETS if self.encoder == "libx264" else SVTAV1_PRESETS
        if self.preset is not None and str(self.preset) not in presets:
            raise OptionError(f"preset {self.preset!r}: expected one of {', '.join(presets)} for {self.codec}")

    def check_fps(self, fps: float) -> None:
        """Refuse a rate the encoder cannot open (libsvtav1: at most 240 fps)."""
        limit = MAX_FPS.get(self.codec)
        if limit is not None and fps > limit:
            raise OptionError(f"fps {fps:g}: {self.codec} video is at most {limit} fps; pass --codec h264 or a lower "
                              "--fps")

    @property
    def encoder(self) -> str:
        return CODECS[self.codec][0]

    @property
    def effective_preset(self) -> int | str:
        if self.preset is not None:
            return self.preset
        return 12 if self.encoder == "libsvtav1" else "veryfast"

    def options(self) -> dict[str, str]:
        opts = {"g": str(self.gop), "crf": str(self.crf), "preset": str(self.effective_preset)}
        if self.encoder == "libx264":
            opts["bf"] = "0"  # no B-frames: dts == pts, so encoded segments concatenate
            if self.threads:
                opts["threads"] = str(self.threads)
            return opts
        svt = [f"lp={self.threads}"] if self.threads else []
        if self.gop == 2:  # other intervals encode differently with these (measured: 1, 3 and 4)
            svt += PAIR_GOP_PARAMS
        if svt:
            opts["svtav1-params"] = ":".join(svt)
        return opts


class VideoEncoder:
    """Writes frames to one MP4 (a file or a binary buffer) with pts = frame number and time base 1/fps."""

    def __init__(self, target: Path | BinaryIO, width: int, height: int, fps: int, settings: VideoSettings) -> None:
        if settings.pix_fmt.startswith(("yuv420", "yuv422")) and (width % 2 or height % 2):
            raise ConversionError(f"{width}x{height} frames: {settings.pix_fmt} video needs an even width and "
                                  "height; pass image_size to resize them")
        os.environ.setdefault("SVT_LOG", "1")  # SVT-AV1 prints its banner per stream otherwise
        self.frames = 0
        self._container: Any = av.open(str(target) if isinstance(target, Path) else target, mode="w", format="mp4")
        stream: Any = self._container.add_stream(settings.encoder, rate=fps, options=settings.options())
        stream.width, stream.height, stream.pix_fmt = width, height, settings.pix_fmt
        self._stream: Any = stream

    def add(self, pixels: np.ndarray) -> None:
        """Encode one RGB uint8 (H, W, 3) frame (grey frames are expanded to RGB); other dtypes (depth) are refused,
        never truncated to 8 bits."""
        if pixels.dtype != np.uint8:
            raise ConversionError(f"video frame {self.frames} is {pixels.dtype}: colour video takes 8-bit frames "
                                  "only (depth streams have their own encoding)")
        if pixels.ndim == 2:
            pixels = np.repeat(pixels[:, :, None], 3, axis=2)
        elif pixels.shape[2] == 4:
            pixels = pixels[:, :, :3]
        # wraps the array without a copy: the encoder's own conversion to its pixel format (swscale) reads it
        frame = av.VideoFrame.from_numpy_buffer(np.ascontiguousarray(pixels, dtype=np.uint8), format="rgb24")
        frame.pts = self.frames
        for packet in self._stream.encode(frame):
            self._container.mux(packet)
        self.frames += 1

    def close(self) -> None:
        for packet in self._stream.encode(None):
            self._container.mux(packet)
        self._container.close()


def video_info(path: Path) -> dict[str, Any]:
    """Stream facts of a written file, as LeRobot's `info` block names them."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        return {
            "video.height": stream.codec_context.height,
            "video.width": stream.codec_context.width,
            "video.codec": stream.codec_context.codec.canonical_name,
            "video.pix_fmt": stream.codec_context.pix_fmt,
            "video.fps": round(float(stream.average_rate or stream.guessed_rate or 0)),
            "video.channels": 3,
            "has_audio": bool(container.streams.audio),
        }
