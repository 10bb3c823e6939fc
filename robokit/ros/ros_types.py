"""ROS message decoders from the recording's own definitions (rosbags typestores), cached per definition."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from rosbags.typesys import Stores, get_types_from_idl, get_types_from_msg, get_typestore

from robokit.ros.heads import IMAGE_TYPES, HeadParser, defined_as_standard, image_head, image_whole

_IDL_SEPARATOR = "=" * 80 + "\n"


@lru_cache(maxsize=1)
def _latest() -> Any:
    return get_typestore(Stores.LATEST)


def _types(msgtype: str, definition: str, fmt: str) -> Any:
    if fmt == "idl":
        if not definition.startswith(_IDL_SEPARATOR + "IDL: "):
            return get_types_from_idl(definition)
        types: dict[str, Any] = {}
        for block in definition.split(_IDL_SEPARATOR)[1:]:
            types.update(get_types_from_idl(block.split("\n", 1)[1]))
        return types
    return get_types_from_msg(definition, msgtype)


@lru_cache(maxsize=512)
def _store(msgtype: str, definition: str, fmt: str) -> Any:
    """A typestore holding `msgtype` as the recording defines it (`fmt` "" = none stored: the standard ROS 2 types)."""
    if fmt:
        store = get_typestore(Stores.EMPTY)
        store.register(_types(msgtype, definition, fmt))
    else:
        store = _latest()
        if msgtype not in store.fielddefs:
            raise KeyError(f"the recording stores no definition of {msgtype} and it is not a standard ROS 2 type")
    store.get_msgdef(msgtype)  # generate the (de)serialiser now: a missing dependency fails here
    return store


@lru_cache(maxsize=512)
def ros_decoder(msgtype: str, definition: str, fmt: str, encoding: str) -> Callable[[Any], Any]:
    """raw → object for `msgtype` ("cdr" or "ros1") from its definition (`fmt` "msg"|"idl"; "" = none stored,
    use the standard ROS 2 types); raises when it does not parse or the type is unknown, so the topic is skipped."""
    store = _store(msgtype, definition, fmt)
    ros1 = encoding == "ros1"
    decode: Callable[[Any], Any] = ((lambda raw: store.deserialize_ros1(raw, msgtype)) if ros1
                                    else (lambda raw: store.deserialize_cdr(raw, msgtype)))
    whole = image_whole(msgtype, ros1) if _standard(msgtype, definition, fmt, ros1) else None
    if whole is None:
        return decode
    return lambda raw: _either(whole(raw), decode, raw)  # pixels not copied; rosbags tells what is wrong


def _either(found: Any, decode: Callable[[Any], Any], raw: Any) -> Any:
    return found if found is not None else decode(raw)


@lru_cache(maxsize=512)
def ros_head(msgtype: str, definition: str, fmt: str, encoding: str) -> HeadParser | None:
    """The header parser of an image type the recording defines as ROS 2 ("cdr") or ROS 1 ("ros1") does (see
    `heads`); None otherwise."""
    ros1 = encoding == "ros1"
    return image_head(msgtype, ros1) if _standard(msgtype, definition, fmt, ros1) else None


def _standard(msgtype: str, definition: str, fmt: str, ros1: bool) -> bool:
    """Whether the recording lays out an image type as `heads` reads it."""
    return msgtype in IMAGE_TYPES and defined_as_standard(_store(msgtype, definition, fmt).fielddefs, msgtype, ros1)
