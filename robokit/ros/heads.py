"""Image messages' headers read from their first bytes: the index pass needs each frame's stamp, not its pixels.

`image_head(kind)` parses a little-endian CDR `sensor_msgs/msg/Image` or `CompressedImage` from a prefix of its
bytes and the message's full size, with every check rosbags' full decode makes (string lengths and terminators,
UTF-8, the data length against the message's size, trailing bytes). It answers None whenever the prefix cannot
prove the message sound; the caller then decodes the whole message, so a damaged frame fails as it always did.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import NamedTuple

HEAD_BYTES = 512  # read of a frame in the index pass: its header, strings and data length
_U32 = struct.Struct("<I")
_TIME = struct.Struct("<iI")
_CDR_LE = b"\x00\x01"


class Stamp(NamedTuple):
    sec: int
    nanosec: int


class Header(NamedTuple):
    stamp: Stamp
    frame_id: str


class ImageHead(NamedTuple):
    """What the index pass reads of a frame after its first one (see `ImageBuilder.headers_suffice`)."""

    header: Header


HeadParser = Callable[[bytes, int], ImageHead | None]


def _string(raw: memoryview, pos: int) -> tuple[str, int] | None:
    """A CDR string at `pos` (aligned to 4 first) and the position after it; None when it is not whole and sound."""
    pos = (pos + 3) & -4
    if pos + 4 > len(raw):
        return None
    (length,) = _U32.unpack_from(raw, pos)
    end = pos + 4 + length
    if length < 1 or end > len(raw) or raw[end - 1] != 0:
        return None
    try:
        return bytes(raw[pos + 4:end - 1]).decode(), end
    except UnicodeDecodeError:
        return None


def _parse(prefix: bytes, size: int, image: bool) -> ImageHead | None:
    if len(prefix) < 12 or prefix[:2] != _CDR_LE:  # big-endian messages are decoded whole
        return None
    raw = memoryview(prefix)[4:]
    sec, nanosec = _TIME.unpack_from(raw, 0)
    found = _string(raw, 8)
    if found is None:
        return None
    frame_id, pos = found
    if image:  # height, width, encoding, is_bigendian, step
        pos = ((pos + 3) & -4) + 8
        found = _string(raw, pos)
        if found is None:
            return None
        pos = found[1] + 1
        pos = ((pos + 3) & -4) + 4
    else:  # format
        found = _string(raw, pos)
        if found is None:
            return None
        pos = found[1]
    pos = (pos + 3) & -4
    if pos + 4 > len(raw):
        return None
    (count,) = _U32.unpack_from(raw, pos)
    end = 4 + pos + 4 + count  # in the whole message, encapsulation header included
    if end > size or end + 3 < size:  # data past the message's end, or bytes left after it
        return None
    return ImageHead(Header(Stamp(sec, nanosec), frame_id))


def image_head(msgtype: str) -> HeadParser | None:
    """The header parser of a standard image type (None for other types)."""
    if msgtype == "sensor_msgs/msg/Image":
        return lambda prefix, size: _parse(prefix, size, True)
    if msgtype == "sensor_msgs/msg/CompressedImage":
        return lambda prefix, size: _parse(prefix, size, False)
    return None
