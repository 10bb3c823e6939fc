"""Lazy topic frames: one pass for positions in order, a seek by log time on a step back, bounded work."""

from __future__ import annotations

from collections.abc import Generator

import numpy as np
import pytest

from robokit.errors import SourceError
from robokit.sources.framesource import TopicFrames
from robokit.timeline import Frame


class FakeTopic:
    """Messages (log time, index); records every scan's start and how many messages each decoded."""

    def __init__(self, log_times: list[int]) -> None:
        self.log_times = log_times
        self.starts: list[int | None] = []
        self.decoded: list[int] = []
        self.open = 0

    def scan(self, start: int | None) -> Generator[tuple[int, int], None, None]:
        self.starts.append(start)
        self.open += 1
        try:
            for i, t in enumerate(self.log_times):
                if start is None or t >= start:
                    yield t, i
        finally:
            self.open -= 1

    def decode(self, item: tuple[int, int]) -> Frame:
        self.decoded.append(item[1])
        return Frame("raw", pixels=np.full((1, 1), item[1], np.uint8))

    def source(self) -> TopicFrames[tuple[int, int]]:
        return TopicFrames(self.scan, self.decode, np.asarray(self.log_times), "fake /topic")


def values(frames: list[Frame]) -> list[int]:
    return [int(f.array()[0, 0]) for f in frames]


def test_in_order_is_one_pass_and_decodes_only_requested() -> None:
    topic = FakeTopic([10, 20, 20, 30, 40, 50])
    assert values(list(topic.source().iter_frames([1, 1, 3, 5]))) == [1, 1, 3, 5]
    assert topic.starts == [20] and topic.decoded == [1, 3, 5] and topic.open == 0


def test_step_back_seeks_by_log_time() -> None:
    topic = FakeTopic([10, 20, 20, 30, 40, 50])
    assert values(list(topic.source().iter_frames([4, 2, 3, 0]))) == [4, 2, 3, 0]
    assert topic.starts == [40, 20, 10]  # frame 2 shares log time 20 with frame 1: counted from there


def test_unsorted_log_times_rescan_from_the_start() -> None:
    topic = FakeTopic([30, 10, 20])
    assert values(list(topic.source().iter_frames([2, 0, 1]))) == [2, 0, 1]
    assert topic.starts == [None, None]


def test_errors_and_early_stop() -> None:
    topic = FakeTopic([10, 20])
    with pytest.raises(IndexError, match="out of range"):
        list(topic.source().iter_frames([2]))
    frames = topic.source().iter_frames([0, 1])
    next(frames)
    frames.close()
    assert topic.open == 0
    shrunk = FakeTopic([10, 20])
    source = shrunk.source()
    shrunk.log_times = [10]  # the file changed under us
    with pytest.raises(SourceError, match="frame 1 is no longer in the recording"):
        list(source.iter_frames([1]))
