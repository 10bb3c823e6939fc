"""The builder base every message type shares: a topic's clock, sample ordering, pose and numeric series."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, ClassVar

import numpy as np

from robokit import heap
from robokit.timeline import (
    Loss,
    NumericStream,
    PoseStream,
    Stream,
    StreamOrigin,
)
from robokit.timeline.streams import order_samples

HEADER_CLOCK_MAX_OFFSET_NS = 60 * 10**9
_INT64 = range(-(1 << 63), 1 << 63)
NEAR_ZERO_NS = 10 * 365 * 86400 * 10**9  # stamps before 1980: simulation time or an unset clock


class Clock:
    """Header stamps and log times of one topic's samples (8 bytes each); picks the clock the streams are stamped
    with."""

    def __init__(self) -> None:
        self.stamps = heap.Ints()  # a long recording's in a file, not in memory
        self.logs = heap.Ints()
        self._found: tuple[int, str] | None = None  # (samples, `_header_problem`) as last found

    def add(self, stamp: int, log_time: int) -> int:
        """The sample's index; a time past int64 (damaged data) raises OverflowError and adds nothing."""
        if log_time not in _INT64:
            raise OverflowError(f"log time {log_time} is past int64")
        self.stamps.append(stamp)
        self.logs.append(log_time)
        return len(self.logs) - 1

    def resolve(self) -> tuple[np.ndarray, str]:
        """Header stamps when all are non-zero, their median offset from log time is under 60 s and they
        advance with it (span at least half the log times'); else the log times."""
        return (self._stamps(), "header") if not self._problem() else (self._logs(), "log")

    def _problem(self) -> str:
        """`_header_problem`, found once for the samples so far (`resolve` and `notes` both ask)."""
        if self._found is None or self._found[0] != len(self.logs):
            self._found = (len(self.logs), self._header_problem())
        return self._found[1]

    def _stamps(self) -> np.ndarray:
        return self.stamps.array()

    def _logs(self) -> np.ndarray:
        return self.logs.array()

    def _header_problem(self) -> str:
        """Why the header stamps are not the clock ("" when they are)."""
        stamps, logs = self._stamps(), self._logs()
        if not len(stamps) or np.any(stamps == 0):
            return "unset"
        offset = float(np.median(np.abs(stamps.astype(np.float64) - logs.astype(np.float64))))
        if offset >= HEADER_CLOCK_MAX_OFFSET_NS:
            return f"header stamps are {offset / 1e9:.3g} s from the log time (simulation time or another clock)"
        log_span = int(logs.max() - logs.min())
        if log_span > 0 and int(stamps.max() - stamps.min()) < log_span // 2:
            return "header stamps do not advance with the log time"
        return ""

    def notes(self, topic: str) -> list[str]:
        """Warnings on the chosen clock: header stamps far from log time or not advancing, stamps near zero."""
        times, source = self.resolve()
        notes = []
        problem = self._problem()
        if problem not in ("", "unset"):
            notes.append(f"{topic}: {problem}; using the log time")
        if len(times) and int(times.max()) < NEAR_ZERO_NS:
            notes.append(f"{topic}: {source} timestamps near zero (simulation time or an unset clock, last at "
                         f"{int(times.max()) / 1e9:.3f} s); kept as recorded")
        return notes


class TopicBuilder:
    """Accumulates one topic's messages; `build` returns its streams with default channel names."""

    multi: ClassVar[bool] = False  # several channels per topic: a user mapping renames the group
    group = ""  # the channels' common prefix when more than their first part (a user mapping replaces it)
    lazy_frames: ClassVar[bool] = False  # needs a FrameSource over the topic's messages

    def __init__(self, topic: str, msgtype: str) -> None:
        self.topic = topic
        self.msgtype = msgtype
        self.clock = Clock()
        self.warnings: list[str] = []
        self.losses: list[Loss] = []  # samples of the recording the streams leave out
        self._times: np.ndarray | None = None
        self.origin = StreamOrigin(topic, msgtype)

    def add(self, msg: Any, log_time: int, position: int) -> None:
        raise NotImplementedError

    def headers_suffice(self) -> bool:
        """Whether `add` now needs only the next messages' headers (readers may then skip their payload)."""
        return False

    def build(self) -> list[Stream]:
        raise NotImplementedError

    def ordered(
        self, name: str, samples: Sequence[int] | np.ndarray, content: Callable[[int], Hashable] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Sorted unique timestamps of `samples` (clock indices) and which samples they keep.

        A sample is a duplicate only when its timestamp and its `content` (of its index in `samples`) equal
        an earlier one's; samples sharing a timestamp with other content stay, in recorded order, 1 ns apart.
        """
        if self._times is None:
            self._times, source = self.clock.resolve()
            self.origin = StreamOrigin(self.topic, self.msgtype, source)
            self.warnings.extend(self.clock.notes(self.topic))
        idx = np.asarray(samples, dtype=np.int64)
        ts, keep, dropped, moved = order_samples(self._times[idx], content)
        if dropped:
            self.warnings.append(
                f"{self.topic}: {dropped} sample(s) of {name} dropped (same timestamp and content as an earlier one)"
            )
        if moved:
            self.warnings.append(
                f"{self.topic}: {moved} sample(s) of {name} share a timestamp with different content; "
                "kept in recorded order, 1 ns apart"
            )
        return ts, keep


class Rows:
    """Samples of one numeric series: clock indices, and float64 rows in a `heap.RowSpool` (a long topic's in a
    mapped file). A message's own arrays are not kept: each would hold the message's whole buffer (a topic of
    60,000 joint states held 100 MB that way, its values 10 MB)."""

    def __init__(self, width: int | None = None) -> None:
        self._samples = heap.Ints()
        self._rows = None if width is None else heap.RowSpool(width)  # width None: the first row's

    def __len__(self) -> int:
        return len(self._samples)

    @property
    def samples(self) -> np.ndarray:
        """Each row's clock index."""
        return self._samples.array()

    def add(self, sample: int, row: Sequence[float] | np.ndarray) -> None:
        """Append one row; raises (ValueError, TypeError) before the sample counts when the row does not fit."""
        if self._rows is None:
            self._rows = heap.RowSpool(len(row))
        self._rows.append(row)
        self._samples.append(sample)

    def values(self) -> np.ndarray:
        """The rows so far, (N, width)."""
        return self._rows.array() if self._rows is not None else np.empty((0, 0))

    def stream(self, b: TopicBuilder, name: str, names: Sequence[str], unit: str) -> NumericStream:
        samples = self.samples
        values = self.values().reshape(len(samples), len(names))
        ts, keep = b.ordered(name, samples, lambda i: values[i].tobytes())
        return NumericStream(name, ts, heap.take(values, keep), tuple(names), unit, origin=b.origin)


class Poses:
    """Samples of one pose series: clock indices, translations and xyzw quaternions (one 7-wide row each)."""

    def __init__(self, parent: str) -> None:
        self.parent = parent
        self.rows = Rows(7)

    def add(self, sample: int, translation: tuple[float, float, float], q: tuple[float, float, float, float]) -> None:
        self.rows.add(sample, (*translation, *q))

    def stream(self, b: TopicBuilder, name: str, child: str, static: bool = False) -> PoseStream:
        values = self.rows.values()
        ts, keep = b.ordered(name, self.rows.samples, lambda i: values[i].tobytes())
        return PoseStream(name, ts, heap.take(values, keep, slice(0, 3)), heap.take(values, keep, slice(3, 7)),
                          parent_frame=self.parent, child_frame=child, static=static, origin=b.origin)
