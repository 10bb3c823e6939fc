"""The MCAP encodings by name: the writer's `mcap_encoding` option picks one of these implementations."""

from __future__ import annotations

from robokit.converters.mcap.encoding import Encoder
from robokit.converters.mcap.protobuf import ProtobufEncoder
from robokit.converters.mcap.ros2 import Ros2Encoder
from robokit.errors import OptionError

ENCODINGS = ("protobuf", "ros2")


def encoder_for(name: str) -> Encoder:
    """The encoder called `name` (protobuf or ros2); OptionError listing both otherwise."""
    if name == "protobuf":
        return ProtobufEncoder()
    if name == "ros2":
        return Ros2Encoder()
    raise OptionError(f"mcap_encoding {name!r}: expected one of {', '.join(ENCODINGS)}")
