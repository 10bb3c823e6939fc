"""One MCAP topic to write: its name, message kind, count, a lazy message iterator and channel metadata."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from robokit.converters.mcap.encoding import Kind
from robokit.converters.mcap.reader import CHANNELS_KEY, DERIVED_KEY

Messages = Callable[[], Iterator[tuple[int, bytes]]]  # → (time ns, serialised message), times non-decreasing


@dataclass(frozen=True)
class Topic:
    """`messages()` yields exactly `count` messages; `metadata` becomes the MCAP channel's metadata."""

    topic: str
    kind: Kind
    count: int
    messages: Messages
    metadata: Mapping[str, str] = field(default_factory=dict)


def carries(names: Mapping[str, str]) -> dict[str, str]:
    """Channel metadata telling robokit's reader which timeline channel each of its default names is."""
    return {CHANNELS_KEY: json.dumps(dict(names), sort_keys=True)}


def derived(why: str) -> dict[str, str]:
    """Channel metadata marking a topic computed by robokit (readers skip it: it is not a recorded stream)."""
    return {DERIVED_KEY: why}


class TopicNames:
    """Hands out valid ROS 2 topic names (other characters become `_`), suffixing `_2`, ... on a clash."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def take(self, topic: str) -> str:
        topic = "/" + "/".join(re.sub(r"[^A-Za-z0-9_]", "_", t) for t in topic.split("/") if t)
        out, i = topic, 2
        while out in self._used:
            out, i = f"{topic}_{i}", i + 1
        self._used.add(out)
        return out
