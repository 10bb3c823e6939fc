"""Image messages' headers read from their first bytes: the index pass needs each frame's stamp, not its pixels.

Readers walking uncompressed chunks hand such messages over as a `Head` (the first bytes, the full size, where
the rest lies). `image_head(msgtype, ros1)` parses a `sensor_msgs/msg/Image` or `CompressedImage` (little-endian
CDR, or ROS 1) from that prefix with every check rosbags' full decode makes (string lengths and terminators,
UTF-8, the data length against the message's size, trailing bytes). It answers None whenever the prefix cannot
prove the message sound; `headed` then decodes the whole message, so a damaged frame fails as it always did.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import IO, Any, NamedTuple

import numpy as np
from rosbags.interfaces import Nodetype

HEAD_BYTES = 512  # read of a frame in the index pass: its header, strings and data length
DATA_HEAD = 20  # a compressed frame's first data bytes the index pass checks: JPEG, PNG or compressedDepth magic
WALK_ABOVE = 1 << 18  # chunk bytes from which an uncompressed chunk is walked in the file, not read whole
_U32 = struct.Struct("<I")
_TIME = struct.Struct("<iI")
_SIZE = struct.Struct("<II")
_CDR_LE = b"\x00\x01"
IMAGE_TYPES = ("sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage")  # the types the parsers read


class Head(NamedTuple):
    """The first bytes of a message's data, its full size, and where the rest lies (`whole` reads it all)."""

    prefix: bytes
    size: int
    f: IO[bytes]
    offset: int

    def whole(self) -> bytes:
        self.f.seek(self.offset)
        data = self.f.read(self.size)
        if len(data) != self.size:
            raise ValueError(f"file ends inside a message ({len(data)} of {self.size} bytes)")
        return data


class Stamp(NamedTuple):
    sec: int
    nanosec: int


class Header(NamedTuple):
    stamp: Stamp
    frame_id: str


class ImageHead(NamedTuple):
    """What the index pass reads of a frame after its first one (see `ImageBuilder.headers_suffice`): its header;
    a raw image's size, encoding, row step and data length; a compressed image's first data bytes (up to
    `DATA_HEAD`; None when they lie past the prefix). The index checks them (`pixels.frame_layout`)."""

    header: Header
    height: int = 0
    width: int = 0
    encoding: str = ""
    step: int = 0
    data_size: int = 0
    data_head: bytes | None = None


class ImageMessage(NamedTuple):
    """A `sensor_msgs/msg/Image` as `image_whole` reads it: `data` a read-only view of the message's bytes."""

    header: Header
    height: int
    width: int
    encoding: str
    is_bigendian: int
    step: int
    data: np.ndarray


class CompressedImageMessage(NamedTuple):
    """A `sensor_msgs/msg/CompressedImage` as `image_whole` reads it."""

    header: Header
    format: str
    data: bytes


HeadParser = Callable[[bytes, int], ImageHead | None]
WholeParser = Callable[[bytes | memoryview], ImageMessage | CompressedImageMessage | None]


# The layouts the parsers read, (field, type) in order: a recording must define its types so for them to be used.
_LAYOUTS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "sensor_msgs/msg/Image": (("header", "std_msgs/msg/Header"), ("height", "uint32"), ("width", "uint32"),
                              ("encoding", "string"), ("is_bigendian", "uint8"), ("step", "uint32"),
                              ("data", "uint8[]")),
    "sensor_msgs/msg/CompressedImage": (("header", "std_msgs/msg/Header"), ("format", "string"),
                                        ("data", "uint8[]")),
    "builtin_interfaces/msg/Time": (("sec", "int32"), ("nanosec", "uint32")),
}
_HEADERS = {False: (("stamp", "builtin_interfaces/msg/Time"), ("frame_id", "string")),
            True: (("seq", "uint32"), ("stamp", "builtin_interfaces/msg/Time"), ("frame_id", "string"))}


def _spelled(desc: Any) -> str:
    """A rosbags field description as its type's name ("uint8[]", "string<=10", "std_msgs/msg/Header")."""
    kind, detail = desc
    if kind == Nodetype.NAME:
        return str(detail)
    inner, bound = detail
    if kind == Nodetype.BASE:
        return f"{inner}<={bound}" if bound else str(inner)
    return _spelled(inner) + (f"[{bound}]" if kind == Nodetype.ARRAY else f"[<={bound}]" if bound else "[]")


def defined_as_standard(fielddefs: Mapping[str, Any], msgtype: str, ros1: bool) -> bool:
    """Whether a recording's type definitions (rosbags `fielddefs`) lay `msgtype` out as the parsers read it."""
    wanted = {**_LAYOUTS, "std_msgs/msg/Header": _HEADERS[ros1]}
    for name in (msgtype, "std_msgs/msg/Header", "builtin_interfaces/msg/Time"):
        entry = fielddefs.get(name)
        if entry is None or tuple((field, _spelled(desc)) for field, desc in entry[1]) != wanted[name]:
            return False
    return True


def headed(parse: HeadParser, decode: Callable[[Any], Any], raw: Any) -> Any:
    """A message decoded from its header when the reader gave a `Head` (whole when the prefix does not suffice)."""
    if not isinstance(raw, Head):
        return decode(raw)
    found = parse(raw.prefix, raw.size)
    return found if found is not None else decode(raw.whole())


def _string(raw: memoryview, pos: int, cdr: bool) -> tuple[str, int] | None:
    """A string at `pos` (CDR: aligned to 4, NUL-terminated) and the position after it; None when it is not whole
    and sound."""
    if cdr:
        pos = (pos + 3) & -4
    if pos + 4 > len(raw):
        return None
    (length,) = _U32.unpack_from(raw, pos)
    end = pos + 4 + length
    if end > len(raw) or (cdr and (length < 1 or raw[end - 1] != 0)):
        return None
    try:
        return bytes(raw[pos + 4:end - cdr]).decode(), end
    except UnicodeDecodeError:
        return None


def _layout(prefix: bytes | memoryview, size: int, image: bool,
            cdr: bool) -> tuple[Header, tuple[Any, ...], int, int] | None:
    """(header, the fields between it and the data, where the data starts in `prefix`, its length) of an image
    message of `size` bytes from its first bytes; None when they cannot prove it sound."""
    if cdr:
        if len(prefix) < 12 or prefix[:2] != _CDR_LE:  # big-endian messages are decoded whole
            return None
        raw, size, pos, base = memoryview(prefix)[4:], size - 4, 0, 4
    else:
        raw, pos, base = memoryview(prefix), 4, 0  # after the ROS 1 header's seq
    if pos + 8 > len(raw):
        return None
    sec, nanosec = _TIME.unpack_from(raw, pos)
    found = _string(raw, pos + 8, cdr)
    if found is None:
        return None
    frame_id, pos = found
    fields: tuple[Any, ...]
    if image:  # height, width, encoding, is_bigendian, step
        pos = (pos + 3) & -4 if cdr else pos
        if pos + 8 > len(raw):
            return None
        height, width = _SIZE.unpack_from(raw, pos)
        found = _string(raw, pos + 8, cdr)
        if found is None or found[1] >= len(raw):
            return None
        encoding, pos = found
        bigendian, pos = raw[pos], pos + 1
        pos = (pos + 3) & -4 if cdr else pos
        if pos + 4 > len(raw):
            return None
        fields, pos = (height, width, encoding, bigendian, _U32.unpack_from(raw, pos)[0]), pos + 4
    else:  # format
        found = _string(raw, pos, cdr)
        if found is None:
            return None
        fields, pos = (found[0],), found[1]
    pos = (pos + 3) & -4 if cdr else pos
    if pos + 4 > len(raw):
        return None
    (count,) = _U32.unpack_from(raw, pos)
    end = pos + 4 + count
    # the data must end inside the message; CDR allows up to 3 bytes of padding after it, ROS 1 none
    if end > size or (end + 3 < size if cdr else end != size):
        return None
    return Header(Stamp(sec, nanosec), frame_id), fields, base + pos + 4, count


def _parse(prefix: bytes, size: int, image: bool, cdr: bool) -> ImageHead | None:
    found = _layout(prefix, size, image, cdr)
    if found is None:
        return None
    header, fields, start, count = found
    if not image:
        end = start + min(count, DATA_HEAD)
        return ImageHead(header, data_size=count, data_head=bytes(prefix[start:end]) if end <= len(prefix) else None)
    height, width, encoding, _, step = fields
    return ImageHead(header, height, width, encoding, step, count)


def _whole(raw: bytes | memoryview, image: bool, cdr: bool) -> ImageMessage | CompressedImageMessage | None:
    found = _layout(raw, len(raw), image, cdr)
    if found is None:
        return None
    header, fields, start, count = found
    if not image:
        (fmt,) = fields
        return CompressedImageMessage(header, fmt, bytes(raw[start:start + count]))
    height, width, encoding, bigendian, step = fields
    data = np.frombuffer(raw, np.uint8, count, start)
    # a view of the message's own bytes; copied out of a larger buffer (a chunk), which a view would keep alive
    return ImageMessage(header, height, width, encoding, bigendian, step,
                        data if isinstance(raw, bytes) else data.copy())


def image_head(msgtype: str, ros1: bool = False) -> HeadParser | None:
    """The header parser of a standard image type (None for other types)."""
    if msgtype not in IMAGE_TYPES:
        return None
    image = msgtype == "sensor_msgs/msg/Image"
    return lambda prefix, size: _parse(prefix, size, image, not ros1)


def image_whole(msgtype: str, ros1: bool = False) -> WholeParser | None:
    """The whole-message parser of a standard image type (None for other types): the decode of every frame an
    export reads, with the checks rosbags makes, but without its copy of the pixels."""
    if msgtype not in IMAGE_TYPES:
        return None
    image = msgtype == "sensor_msgs/msg/Image"
    return lambda raw: _whole(raw, image, not ros1)
