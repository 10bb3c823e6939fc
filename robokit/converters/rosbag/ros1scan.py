"""ROS 1 bags without a usable index (a recording killed before `rosbag` wrote it, or a cut file): the chunks
are read in file order, so the intact part is kept; a damaged chunk is skipped, a cut one ends the scan."""

from __future__ import annotations

import os
from collections.abc import Callable, Generator
from io import BytesIO
from pathlib import Path
from typing import IO

from rosbags.interfaces import Connection, ConnectionExtRosbag1, MessageDefinition, MessageDefinitionFormat
from rosbags.rosbag1.reader import Header, RecordType, decompressors, normalize
from rosbags.typesys.msg import normalize_msgtype

Item = tuple[Connection, int, bytes]
_MAGIC = b"#ROSBAG V2.0\n"


def _block(f: IO[bytes], end: int) -> bytes:
    """One length-prefixed block; raises EOFError when the file ends before it does (never reads past `end`)."""
    raw = f.read(4)
    if len(raw) < 4:
        raise EOFError("no record length")
    size = int.from_bytes(raw, "little")
    if f.tell() + size > end:
        raise EOFError(f"a record of {size} bytes runs past the end of the file")
    return f.read(size)


def _records(f: IO[bytes], end: int) -> Generator[tuple[Header, bytes], None, None]:
    """(header, data) of each record from the current position until `end`."""
    while f.tell() < end:
        header = Header.read(BytesIO(_length(_block(f, end))))
        yield header, _block(f, end)


def _length(block: bytes) -> bytes:
    """The block with its length prefix again (rosbags' Header.read expects one)."""
    return len(block).to_bytes(4, "little") + block


def _connection(header: Header, data: bytes) -> Connection:
    info = Header.read(BytesIO(_length(data)))
    latching = info.get_string("latching") if "latching" in info else ""
    return Connection(
        header.get_uint32("conn"),
        normalize(header.get_string("topic")),
        normalize_msgtype(info.get_string("type")),
        MessageDefinition(MessageDefinitionFormat.MSG, info.get_string("message_definition")),
        info.get_string("md5sum"),
        0,
        ConnectionExtRosbag1(info.get_string("callerid") if "callerid" in info else None,
                             int(latching) if latching.isdigit() else None),
        None,
    )


def has_bag_header(path: Path) -> bool:
    """True when the bag header record after the magic is intact (the least a scan needs)."""
    try:
        with path.open("rb") as f:
            end = f.seek(0, os.SEEK_END)
            f.seek(len(_MAGIC))
            header, _ = next(_records(f, end))
            return bool(header.get_uint8("op") == RecordType.BAGHEADER)
    except Exception:
        return False


def scan(
    path: Path,
    on_connection: Callable[[Connection], None] | None = None,
    warn: Callable[[str], None] | None = None,
) -> Generator[Item, None, None]:
    """Every message of the bag in file order; `on_connection` sees each connection once, `warn` each damaged
    chunk and where the data ends early."""
    conns: dict[int, Connection] = {}
    count = 0

    def connect(header: Header, data: bytes) -> None:
        conn = _connection(header, data)
        if conn.id not in conns:
            conns[conn.id] = conn
            if on_connection is not None:
                on_connection(conn)

    with path.open("rb") as f:
        end = f.seek(0, os.SEEK_END)
        f.seek(len(_MAGIC))
        try:
            for header, data in _records(f, end):
                op = header.get_uint8("op")
                if op == RecordType.CONNECTION:
                    connect(header, data)
                elif op == RecordType.CHUNK:
                    offset = f.tell() - len(data) - 4
                    try:
                        raw = decompressors[header.get_string("compression")](data)
                        if len(raw) != header.get_uint32("size"):
                            raise ValueError(f"{len(raw)} bytes, its header says {header.get_uint32('size')}")
                        inner = list(_records(BytesIO(raw), len(raw)))
                    except Exception as err:
                        if warn is not None:
                            warn(f"damaged chunk near byte {offset} skipped ({type(err).__name__}: {err})")
                        continue
                    for h, d in inner:
                        kind = h.get_uint8("op")
                        if kind == RecordType.CONNECTION:
                            connect(h, d)
                        elif kind == RecordType.MSGDATA and (conn := conns.get(h.get_uint32("conn"))):
                            count += 1
                            yield conn, h.get_time("time"), d
        except Exception as err:  # a cut file ends mid-record
            if warn is not None:
                warn(f"data ends early after {count} messages ({type(err).__name__}: {err})")
