"""The builder of a topic, by its message type: the typed builders (`messages.py`) first, then the plain ones
(`plain.py`, built on the typed ones); any other type is flattened by its fields (`generic.py`)."""

from __future__ import annotations

from robokit.ros.generic import GenericBuilder
from robokit.ros.messages import BUILDERS
from robokit.ros.plain import PLAIN_BUILDERS
from robokit.ros.topic_builder import TopicBuilder


def builder_for(topic: str, msgtype: str) -> TopicBuilder:
    """The builder of the topic's (normalised) type; types without one are flattened by their fields."""
    cls = BUILDERS.get(msgtype) or PLAIN_BUILDERS.get(msgtype) or GenericBuilder
    return cls(topic, msgtype)
