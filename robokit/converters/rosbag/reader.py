"""ROS 1 bags and ROS 2 sqlite3 bags via rosbags, types registered per connection so a bad one skips only its topic.

Storage files are opened one by one: rosbags' directory reader yields nothing on a metadata QoS mismatch.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import operator
import os
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from functools import partial
from io import BytesIO
from pathlib import Path
from typing import Any

from rosbags.interfaces import Connection, MessageDefinitionFormat
from rosbags.rosbag1.reader import Header, RecordType, read_bytes, read_uint32
from rosbags.rosbag2 import Reader as Reader2

from robokit.converters.rosbag import ros1index, ros1scan
from robokit.digest import source_digest
from robokit.errors import SourceError
from robokit.ros import heads
from robokit.ros.bagdir import METADATA, Decompress, check_bag_counts, read_bag_dir
from robokit.ros.collect import Collector, Decode, Loaded, Scan
from robokit.ros.heads import Head, HeadParser, headed
from robokit.ros.ros_types import ros_decoder, ros_head
from robokit.sources.registry import ReadOptions
from robokit.sources.sniff import is_rosbag1, is_sqlite
from robokit.timeline import Episode, EpisodeMeta

Item = tuple[Connection, int, bytes | Head]  # a Head only in the index pass (see `_ros1_messages`)
_FORMATS = {MessageDefinitionFormat.MSG: "msg", MessageDefinitionFormat.IDL: "idl"}


@contextmanager
def _open(path: Path, ros1: bool) -> Iterator[Any]:
    """An open rosbags reader; anything that is not a readable bag becomes a SourceError naming the file. A ROS 1
    bag's index is parsed once per file (`ros1index`): rescans only open the file again."""
    kind = "ROS 1 bag" if ros1 else "ROS 2 sqlite3 storage file"
    with ExitStack() as stack:
        try:
            reader: Any = stack.enter_context(ros1index.opened(path)) if ros1 else Reader2(path)
            if not ros1:
                reader.open()
                stack.callback(reader.close)
        except Exception as err:
            raise SourceError(f"{path}: not a readable {kind} ({type(err).__name__}: {err})") from err
        yield reader


def connection_decoder(conn: Connection, ros1: bool, decompress: Decompress) -> Decode:
    """raw → object for one connection, from its stored definition (ROS 2: standard types when none)."""
    fmt = _FORMATS.get(conn.msgdef.format, "")
    decode = ros_decoder(conn.msgtype, conn.msgdef.data if fmt else "", fmt, "ros1" if ros1 else "cdr")
    if decompress is None:
        return decode
    return lambda raw: decode(decompress(raw))


class _Decoders:
    """Decoders keyed by type and definition, shared by the connections of all storage files."""

    def __init__(self, ros1: bool, decompress: Decompress) -> None:
        self._ros1 = ros1
        self._decompress = decompress
        self._cache: dict[tuple[str, Any], Decode] = {}

    def get(self, conn: Connection) -> Decode:
        key = (conn.msgtype, conn.msgdef)
        decode = self._cache.get(key)
        if decode is None:
            decode = self._cache[key] = connection_decoder(conn, self._ros1, self._decompress)
        return decode

    def head(self, conn: Connection) -> HeadParser | None:
        """The header parser of a ROS 1 image connection (see `heads`); ROS 2 rows are always read whole."""
        fmt = _FORMATS.get(conn.msgdef.format, "")
        return ros_head(conn.msgtype, conn.msgdef.data, fmt, "ros1") if self._ros1 and fmt else None


class _Window:
    """An uncompressed chunk's records read in place, as a BytesIO over them would read (rosbags' `Header.read` and
    `read_bytes` take it): only the bytes asked for leave the file."""

    def __init__(self, f: Any, start: int, size: int) -> None:
        self.f, self.start, self.size, self.pos = f, start, size, 0

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        pos = offset + (self.pos if whence == os.SEEK_CUR else self.size if whence == os.SEEK_END else 0)
        if pos < 0:
            raise ValueError(f"negative seek value {pos}")
        self.pos = pos
        return pos

    def tell(self) -> int:
        return self.pos

    def left(self) -> int:
        return max(0, self.size - self.pos)

    def read(self, n: int = -1) -> bytes:
        n = self.left() if n < 0 else min(n, self.left())
        if not n:
            return b""
        self.f.seek(self.start + self.pos)
        data: bytes = self.f.read(n)
        self.pos += len(data)
        return data


def _ros1_messages(
    reader: Any, conns: list[Connection], start: int | None, damaged: Callable[[str], None] | None = None,
    head: Callable[[int], int] | None = None,
) -> Generator[Item, None, None]:
    """rosbags' ROS 1 message loop, but a chunk that does not decompress to its recorded size or whose
    records do not parse is skipped (told to `damaged` with its offset and messages) and the rest read.

    Large uncompressed chunks are read in place (`_Window`); there a connection for which `head` gives a length
    > 0 gets its messages as a `Head` of that many bytes."""
    by_id = {c.id: c for c in reader.connections}
    entries = heapq.merge(*(_from(reader.indexes[c.id], start) for c in conns))
    bad: set[int] = set()
    pos = -1
    data: Any = BytesIO()  # or a _Window: rosbags' helpers (typed BinaryIO) only read, seek and tell
    for entry in entries:
        if (start is not None and entry.time < start) or entry.chunk_pos in bad:
            continue
        try:
            if entry.chunk_pos != pos:
                pos = entry.chunk_pos
                data = _ros1_window(reader, pos) or BytesIO(_ros1_chunk(reader, pos))
            data.seek(entry.offset)
            header = Header.read(data)
            while header.get_uint8("op") == RecordType.CONNECTION:
                data.seek(read_uint32(data), os.SEEK_CUR)
                header = Header.read(data)
            if header.get_uint8("op") != RecordType.MSGDATA:
                raise ValueError("no message data at its index offset")
            size = read_uint32(data)
            window = data if isinstance(data, _Window) else None
            keep = _kept(header, head) if window is not None and size <= window.left() else 0
            if window is not None and 0 < keep < size:
                raw: bytes | Head = Head(window.read(keep), size, reader.bio, window.start + window.tell() - keep)
            else:
                raw = read_bytes(data, size)
            conn = by_id[header.get_uint32("conn")]
        except Exception as err:
            bad.add(entry.chunk_pos)
            if damaged is not None:
                lost = sum(1 for c in conns for e in reader.indexes[c.id] if e.chunk_pos == entry.chunk_pos)
                damaged(f"damaged chunk at byte {entry.chunk_pos} skipped, up to {lost} messages "
                        f"({type(err).__name__}: {err})")
            continue
        yield conn, entry.time, raw


def _from(index: list[Any], start: int | None) -> Iterable[Any]:
    """A connection's index entries (sorted by time) from log time `start` on, found by bisection: a segment's
    rescan must not step through every earlier message."""
    return index if start is None else itertools.islice(index, bisect.bisect_left(index, start, key=_TIME), None)


_TIME = operator.attrgetter("time")


def _kept(header: Header, head: Callable[[int], int] | None) -> int:
    """Bytes to read of a message whose record header is `header` (0: all); a damaged header reads all, so the
    whole path raises what it always did."""
    if head is None:
        return 0
    try:
        return head(header.get_uint32("conn"))
    except Exception:
        return 0


def _ros1_window(reader: Any, pos: int) -> _Window | None:
    """The chunk at `pos` read in place when it is large and uncompressed and `_ros1_chunk` would accept it."""
    try:
        reader.bio.seek(pos)
        header = Header.read(reader.bio, RecordType.CHUNK)
        compression, size = header.get_string("compression"), header.get_uint32("size")
    except Exception:
        return None
    chunk = reader.chunks.get(pos)
    if compression != "none" or chunk is None or size < heads.WALK_ABOVE or chunk.datasize != size:
        return None
    if chunk.datapos + size > reader.bio.seek(0, os.SEEK_END):
        return None
    return _Window(reader.bio, chunk.datapos, size)


def _ros1_chunk(reader: Any, pos: int) -> bytes:
    """The decompressed records of the chunk at `pos`; raises unless they have the size its header records."""
    reader.bio.seek(pos)
    size = Header.read(reader.bio, RecordType.CHUNK).get_uint32("size")
    chunk = reader.chunks[pos]
    reader.bio.seek(chunk.datapos)
    raw: bytes = chunk.decompressor(read_bytes(reader.bio, chunk.datasize))
    if len(raw) != size:
        raise ValueError(f"chunk holds {len(raw)} bytes, its header says {size}")
    return raw


def _messages(
    reader: Any, ros1: bool, conns: list[Connection], start: int | None, damaged: Callable[[str], None] | None = None,
    head: Callable[[int], int] | None = None,
) -> Iterator[Item]:
    """A storage file's messages of `conns` in log-time order (ROS 1: damaged chunks skipped, `head` as in
    `_ros1_messages`)."""
    if ros1:
        return _ros1_messages(reader, conns, start, damaged, head)
    return iter(reader.messages(connections=conns, start=start))


def _recorded_count(reader: Any, ros1: bool, conn: Connection) -> int:
    """Messages the storage file records for a connection (ROS 1: index entries or chunk info counts, the larger)."""
    if not ros1:
        return int(conn.msgcount)
    return int(max(conn.msgcount, sum(info.connection_counts.get(conn.id, 0) for info in reader.chunk_infos)))


def _declare(conn: Connection, col: Collector, decoders: _Decoders) -> Decode | None:
    """Tell `col` about a connection; its decoder when the topic is wanted and decodable, else None."""
    if not col.declare(conn.topic, conn.msgtype or ""):  # a damaged bag2 database may hold a NULL type
        return None
    try:
        return decoders.get(conn)
    except Exception as err:
        col.reject(conn.topic, f"cannot decode {conn.msgtype}: {type(err).__name__}: {err}")
        return None


def _index_file(path: Path, reader: Any, ros1: bool, col: Collector, decoders: _Decoders, check: bool) -> None:
    """Read one storage file's wanted messages into `col`; with `check`, compare them with its counts."""
    by_connection: dict[int, Decode | None] = {}
    headed_topics: dict[int, str] = {}  # connections whose messages may come as a Head → their topic
    named = []
    for conn in reader.connections:
        if not isinstance(conn.topic, str) or not conn.topic:  # a damaged bag2 database may hold a NULL topic
            col.lose("", f"{path.name}: connection {conn.id} has no topic name; its messages are not read",
                     conn.msgcount if isinstance(conn.msgcount, int) else None)
            continue
        named.append(conn)
        decode = by_connection[conn.id] = _declare(conn, col, decoders)
        parse = decoders.head(conn) if decode is not None else None
        if decode is not None and parse is not None:
            by_connection[conn.id], headed_topics[conn.id] = partial(headed, parse, decode), conn.topic

    def head(conn_id: int) -> int:
        return col.head_bytes(headed_topics.get(conn_id))

    wanted = set(col.wanted())
    for conn in named:
        if conn.topic not in wanted:
            col.add_count(conn.topic, conn.msgcount)
    if conns := [c for c in named if c.topic in wanted]:
        before = col.counts()

        def damaged(what: str) -> None:
            col.lose("", f"{path.name}: {what}")

        try:
            for conn, log_time, raw in _messages(reader, ros1, conns, None, damaged, head):
                col.feed(conn.topic, log_time, raw, by_connection[conn.id])
        except Exception as err:  # a damaged row: keep the messages before it
            col.stopped(path.name, err)
        if check:
            expected: dict[str, int] = {}
            for c in conns:
                expected[c.topic] = expected.get(c.topic, 0) + _recorded_count(reader, ros1, c)
            after = col.counts()
            col.expect(expected, {t: after.get(t, 0) - before.get(t, 0) for t in expected}, f"{path.name}'s index")


def _unindexed(path: Path, ros1: bool) -> str:
    """Why a ROS 1 bag must be read by a linear scan (no usable index: unfinished or cut), "" when it need not."""
    if not ros1:
        return ""
    try:
        with _open(path, ros1):
            return ""
    except SourceError as err:
        return str(err).removeprefix(f"{path}: ")


def _scan_file(path: Path, why: str, col: Collector, decoders: _Decoders) -> None:
    """Read an unindexed ROS 1 bag into `col` in file order (no index: nothing to compare counts with)."""
    by_connection: dict[int, Decode | None] = {}

    def declare(conn: Connection) -> None:
        by_connection[conn.id] = _declare(conn, col, decoders)

    def lost(what: str) -> None:
        col.lose("", f"{path.name}: {what}")

    col.warnings.append(f"{path.name}: {why}; read by a linear scan")
    for conn, log_time, raw in ros1scan.scan(path, declare, lost):
        col.feed(conn.topic, log_time, raw, by_connection[conn.id])


def scan_topic(
    files: Sequence[Path], ros1: bool, linear: set[Path], topic: str, start: int | None
) -> Generator[Item, None, None]:
    """The topic's messages in index-pass order (log time; file order in `linear` files), from `start` on."""
    for path in files:
        if path in linear:
            yield from (m for m in ros1scan.scan(path) if m[0].topic == topic and (start is None or m[1] >= start))
            continue
        with _open(path, ros1) as reader:
            if conns := [c for c in reader.connections if c.topic == topic]:
                yield from _messages(reader, ros1, conns, start)


def _message(decoders: _Decoders, item: Item) -> Any:
    return decoders.get(item[0])(item[2])


def load(
    files: Sequence[Path],
    ros1: bool,
    mapping: dict[str, str],
    decompress: Decompress,
    label: str,
    bag_counts: dict[str, int] | None = None,
) -> Loaded:
    """The index pass over a bag (one or more storage files in order).

    What was read is compared with `bag_counts` (a ROS 2 bag's metadata.yaml), else with each file's own
    counts (a ROS 1 bag's index)."""
    decoders = _Decoders(ros1, decompress)
    linear: set[Path] = set()  # ROS 1 files without a usable index, read by a linear scan

    def frames(topic: str) -> tuple[Scan, Decode]:
        return partial(scan_topic, files, ros1, linear, topic), partial(_message, decoders)

    col = Collector(mapping, frames, label)
    for path in files:
        if why := _unindexed(path, ros1):
            linear.add(path)
            _scan_file(path, why, col, decoders)
            continue
        with _open(path, ros1) as reader:
            _index_file(path, reader, ros1, col, decoders, bag_counts is None)
    if bag_counts is not None:
        check_bag_counts(col, bag_counts)
    return col.finish()


def _episode(
    path: Path,
    files: list[Path],
    digested: list[Path],
    fmt: str,
    ros1: bool,
    decompress: Decompress,
    options: ReadOptions,
    bag_counts: dict[str, int] | None = None,
) -> Episode:
    for f in files:  # a ROS 1 bag without a usable index is scanned when its header is intact
        if (why := _unindexed(f, ros1)) and not ros1scan.has_bag_header(f):
            raise SourceError(f"{f}: {why}")
        if not ros1:
            with _open(f, ros1):
                pass
    meta = EpisodeMeta(
        source_uri=str(path.resolve()),
        episode_id=path.name if path.is_dir() else path.stem,
        source_version=source_digest(digested),
        source_format=fmt,
    )
    return Episode(meta, loader=partial(load, files, ros1, dict(options.mapping), decompress, str(path), bag_counts))


class Rosbag1Format:
    """Reader for ROS 1 bags (`#ROSBAG V2.0`, indexed)."""

    name = "rosbag1"
    description = "ROS 1 bag (.bag)"

    def sniff(self, path: Path) -> bool:
        return is_rosbag1(path)

    def read(self, path: Path, options: ReadOptions) -> list[Episode]:
        return [_episode(path, [path], [path], "rosbag1", True, None, options)]


class Rosbag2Format:
    """Reader for ROS 2 bags in sqlite3 storage: a bag directory or a bare `.db3` file."""

    name = "rosbag2"
    description = "ROS 2 bag (directory with metadata.yaml, or .db3)"

    def sniff(self, path: Path) -> bool:
        return is_sqlite(path) or (path / METADATA).is_file()

    def read(self, path: Path, options: ReadOptions) -> list[Episode]:
        bag = read_bag_dir(path)
        if bag is None:
            return [_episode(path, [path], [path], "rosbag2-sqlite3", False, None, options)]
        bag.check("sqlite3")
        files = list(bag.files)
        digested, counts = [bag.metadata, *files], dict(bag.counts)
        return [_episode(path, files, digested, "rosbag2-sqlite3", False, bag.decompressor(), options, counts)]


ROSBAG1_READER = Rosbag1Format()
ROSBAG2_READER = Rosbag2Format()
