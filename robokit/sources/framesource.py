"""Lazy frames of one image topic (or clouds of a point topic), re-read from the recording on demand with bounded
memory."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from pathlib import Path
from typing import Generic, TypeVar

import numpy as np

from robokit.errors import SourceError
from robokit.timeline import Frame
from robokit.timeline.points import Cloud

T = TypeVar("T")
R = TypeVar("R")


class TopicItems(Generic[T, R]):
    """Item i is the topic's i-th raw message from `scan(start_log_time)`, decoded only when requested.

    In-order positions take one pass; a step back seeks by log time (rescans when log times are unsorted)."""

    noun = "item"  # what an item is, in messages

    def __init__(
        self,
        scan: Callable[[int | None], Generator[T, None, None]],
        decode: Callable[[T], R],
        log_times: np.ndarray,
        label: str,
    ) -> None:
        self._scan = scan
        self._decode = decode
        self._log_times = np.asarray(log_times, dtype=np.int64)
        self._seekable = bool(np.all(np.diff(self._log_times) >= 0))
        self._label = label

    def __len__(self) -> int:
        return len(self._log_times)

    def iter_items(self, positions: Iterable[int]) -> Iterator[R]:
        scan: Generator[T, None, None] | None = None
        at = -1  # position of the last message taken from `scan`
        frame: R | None = None
        try:
            for raw_position in positions:
                p = int(raw_position)
                if not 0 <= p < len(self._log_times):
                    raise IndexError(f"{self._label}: {self.noun} position {p} out of range 0..{len(self) - 1}")
                if scan is None or p < at:
                    if scan is not None:
                        scan.close()
                    start = int(self._log_times[p]) if self._seekable else None
                    scan = self._scan(start)
                    at = int(np.searchsorted(self._log_times, start, "left")) - 1 if start is not None else -1
                    frame = None
                if p != at or frame is None:
                    item = self._advance(scan, at, p)
                    at = p
                    frame = self._frame(item, p)
                yield frame
        finally:
            if scan is not None:
                scan.close()

    def _frame(self, item: T, p: int) -> R:
        try:
            return self._decode(item)
        except Exception as err:  # surfaces as a typed error naming the topic and frame
            raise SourceError(f"{self._label}: {self.noun} {p} cannot be decoded "
                              f"({type(err).__name__}: {err})") from err

    def _advance(self, scan: Generator[T, None, None], at: int, p: int) -> T:
        for _ in range(p - at - 1):
            if next(scan, None) is None:
                break
        item = next(scan, None)
        if item is None:
            raise SourceError(f"{self._label}: {self.noun} {p} is no longer in the recording (file changed?)")
        return item


class TopicFrames(TopicItems[T, Frame]):
    """A FrameSource over an image topic."""

    noun = "frame"
    # The encoded video these frames are a contiguous constant-rate run of, and the first one's time in it
    # (seconds), when there is one: clips can then be stream-copied from the file instead of re-encoded.
    encoded_video: tuple[Path, float] | None = None

    def iter_frames(self, positions: Iterable[int]) -> Iterator[Frame]:
        return self.iter_items(positions)


class TopicClouds(TopicItems[T, Cloud]):
    """A PointSource over a point cloud or laser scan topic."""

    noun = "cloud"

    def iter_clouds(self, positions: Iterable[int]) -> Iterator[Cloud]:
        return self.iter_items(positions)
