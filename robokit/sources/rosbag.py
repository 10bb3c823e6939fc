"""ROS 1 bags and ROS 2 sqlite3 bags via rosbags, types registered per connection so a bad one skips only its topic.

Storage files are opened one by one: rosbags' directory reader yields nothing on a metadata QoS mismatch.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.interfaces import Connection, MessageDefinitionFormat
from rosbags.rosbag1 import Reader as Reader1
from rosbags.rosbag2 import Reader as Reader2

from robokit.digest import source_digest
from robokit.errors import SourceError
from robokit.sources.bagdir import METADATA, Decompress, read_bag_dir
from robokit.sources.collect import Collector, Decode, Loaded
from robokit.sources.framesource import TopicFrames
from robokit.sources.pixels import image_frame
from robokit.sources.registry import ReadOptions
from robokit.sources.ros_types import ros_decoder
from robokit.sources.sniff import is_rosbag1, is_sqlite
from robokit.timeline import Episode, EpisodeMeta, Frame, FrameSource

Item = tuple[Connection, int, bytes]
_FORMATS = {MessageDefinitionFormat.MSG: "msg", MessageDefinitionFormat.IDL: "idl"}


@contextmanager
def _open(path: Path, ros1: bool) -> Iterator[Any]:
    """An open rosbags reader; anything that is not a readable bag becomes a SourceError naming the file."""
    kind = "ROS 1 bag" if ros1 else "ROS 2 sqlite3 storage file"
    try:
        reader: Any = Reader1(path) if ros1 else Reader2(path)
        reader.open()
    except Exception as err:
        raise SourceError(f"{path}: not a readable {kind} ({type(err).__name__}: {err})") from err
    try:
        yield reader
    finally:
        reader.close()


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


def _index_file(path: Path, reader: Any, col: Collector, decoders: _Decoders) -> None:
    by_connection: dict[int, Decode | None] = {}
    for conn in reader.connections:
        by_connection[conn.id] = None
        if col.declare(conn.topic, conn.msgtype or ""):  # a damaged bag2 database may hold a NULL type
            try:
                by_connection[conn.id] = decoders.get(conn)
            except Exception as err:
                col.reject(conn.topic, f"cannot decode {conn.msgtype}: {type(err).__name__}: {err}")
    wanted = set(col.wanted())
    for conn in reader.connections:
        if conn.topic not in wanted:
            col.add_count(conn.topic, conn.msgcount)
    if conns := [c for c in reader.connections if c.topic in wanted]:
        try:
            for conn, log_time, raw in reader.messages(connections=conns):
                col.feed(conn.topic, log_time, raw, by_connection[conn.id])
        except Exception as err:  # a damaged chunk or row: keep the messages before it
            col.stopped(path.name, err)


def scan_topic(files: Sequence[Path], ros1: bool, topic: str, start: int | None) -> Generator[Item, None, None]:
    """The topic's messages in index-pass order (log time), from `start` on."""
    for path in files:
        with _open(path, ros1) as reader:
            if conns := [c for c in reader.connections if c.topic == topic]:
                yield from reader.messages(connections=conns, start=start)


def _frame(decoders: _Decoders, msgtype: str, item: Item) -> Frame:
    return image_frame(decoders.get(item[0])(item[2]), msgtype)


def load(files: Sequence[Path], ros1: bool, mapping: dict[str, str], decompress: Decompress, label: str) -> Loaded:
    """The index pass over a bag (one or more storage files in order)."""
    decoders = _Decoders(ros1, decompress)

    def frames(topic: str, msgtype: str, log_times: np.ndarray) -> FrameSource:
        return TopicFrames(
            partial(scan_topic, files, ros1, topic), partial(_frame, decoders, msgtype), log_times, f"{label} {topic}"
        )

    col = Collector(mapping, frames)
    for path in files:
        with _open(path, ros1) as reader:
            _index_file(path, reader, col, decoders)
    return col.finish()


def _episode(
    path: Path,
    files: list[Path],
    digested: list[Path],
    fmt: str,
    ros1: bool,
    decompress: Decompress,
    options: ReadOptions,
) -> Episode:
    for f in files:
        with _open(f, ros1):
            pass
    meta = EpisodeMeta(
        source_uri=str(path.resolve()),
        episode_id=path.name if path.is_dir() else path.stem,
        source_version=source_digest(digested),
        source_format=fmt,
    )
    return Episode(meta, loader=partial(load, files, ros1, dict(options.mapping), decompress, str(path)))


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
        return [_episode(path, files, [bag.metadata, *files], "rosbag2-sqlite3", False, bag.decompressor(), options)]


ROSBAG1_READER = Rosbag1Format()
ROSBAG2_READER = Rosbag2Format()
