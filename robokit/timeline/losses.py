"""What a reader could not deliver (lost messages with their reason), and non-finite values in numeric streams."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from robokit.timeline.streams import NumericStream, PoseStream, Stream


@dataclass(frozen=True)
class Loss:
    """Messages (frames, samples) the recording holds but the episode does not, and why.

    `topic` is the source topic ("" when a damaged part of the file cannot be tied to one); `messages`
    is how many were lost, None when the container gives no count (e.g. a truncated file without index).
    """

    topic: str
    reason: str
    messages: int | None = None


def lost_messages(losses: Iterable[Loss]) -> int:
    """The number of messages known to be lost (losses without a count add nothing)."""
    return sum(loss.messages or 0 for loss in losses)


def non_finite(streams: Mapping[str, Stream]) -> dict[str, int]:
    """Per numeric or pose channel, how many samples hold a NaN or ±inf (channels without any left out)."""
    counts: dict[str, int] = {}
    for name, s in streams.items():
        if isinstance(s, NumericStream):
            values = [s.values]
        elif isinstance(s, PoseStream):
            values = [s.translation, s.quaternion]
        else:
            continue
        bad = np.zeros(len(s), dtype=bool)
        for v in values:
            if v.size and v.dtype.kind == "f":
                bad |= ~np.isfinite(v.reshape(len(s), -1)).all(axis=1)
        if n := int(bad.sum()):
            counts[name] = n
    return counts


def non_finite_warnings(streams: Mapping[str, Stream]) -> list[str]:
    """One warning per channel holding NaN or ±inf values, with the number of samples affected."""
    return [f"{name}: {n} of {len(streams[name])} samples hold NaN or inf values"
            for name, n in non_finite(streams).items()]
