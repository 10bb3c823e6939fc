"""The builder of a topic, by its message type: the typed builders (`messages.py`) first, then the plain ones
(`plain.py`, built on the typed ones)."""

from __future__ import annotations

from robokit.ros.messages import BUILDERS, TopicBuilder
from robokit.ros.plain import PLAIN_BUILDERS


def builder_for(topic: str, msgtype: str) -> TopicBuilder | None:
    """A builder for the topic's (normalised) type, None when the type is not mapped."""
    cls = BUILDERS.get(msgtype) or PLAIN_BUILDERS.get(msgtype)
    return cls(topic, msgtype) if cls else None
