"""Small in-memory episodes shared by the writer tests (shape changes, failing frame sources)."""

from __future__ import annotations

import errno
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pytest

from robokit.timeline import ArrayFrameSource, Episode, EpisodeMeta, EventStream, Frame, ImageStream, NumericStream

MakeEpisode = Callable[..., Episode]


class FailingSource:
    """A frame source that breaks after `after` frames with an error that is no fault of the input (a full
    disk), which aborts a write; damaged input only skips its episode."""

    def __init__(self, frames: Sequence[np.ndarray], after: int) -> None:
        self._frames = frames
        self._after = after

    def iter_frames(self, positions: Sequence[int]) -> Iterator[Frame]:
        for i, p in enumerate(positions):
            if i == self._after:
                raise OSError(errno.ENOSPC, "No space left on device while the recording vanished")
            yield Frame("raw", pixels=self._frames[int(p)])


@pytest.fixture()
def make_episode() -> MakeEpisode:
    """`make_episode(id, n=10, shapes=None, fail_after=None)`: 10 Hz joints and a 10 Hz camera in memory."""

    def build(episode_id: str = "mem", n: int = 10, shapes: Sequence[tuple[int, int]] | None = None,
              fail_after: int | None = None) -> Episode:
        t = np.arange(n, dtype=np.int64) * 100_000_000 + 1_000_000_000
        sizes = list(shapes or [(8, 6)] * n)
        frames = [np.full((h, w, 3), 10 * i % 256, dtype=np.uint8) for i, (w, h) in enumerate(sizes)]
        source = FailingSource(frames, fail_after) if fail_after is not None else ArrayFrameSource(frames)
        return Episode(EpisodeMeta(f"mem://{episode_id}", episode_id), {
            "joints/position": NumericStream("joints/position", t, values=np.arange(n * 2).reshape(n, 2) * 0.5,
                                             names=("a", "b")),
            "cam/rgb": ImageStream("cam/rgb", t, source=source, width=sizes[0][0], height=sizes[0][1]),
            "task": EventStream("task", t[:1], values=("wave",)),
        })

    return build
