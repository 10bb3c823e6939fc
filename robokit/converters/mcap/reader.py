"""MCAP recordings (any profile; ROS 2 bag dirs in mcap storage): one bad channel never sinks the file.

Unfinished files (no summary or chunk index) are read by a linear scan.
"""

from __future__ import annotations

import io
import json
import zlib
from collections.abc import Callable, Collection, Generator, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import IO, Any, NamedTuple

from mcap.exceptions import McapError
from mcap.reader import FOOTER_SIZE, make_reader
from mcap.records import (
    AttachmentIndex,
    Channel,
    Chunk,
    ChunkIndex,
    DataEnd,
    Footer,
    Message,
    MetadataIndex,
    Schema,
    Statistics,
)
from mcap.stream_reader import MAGIC_SIZE, StreamReader, breakup_chunk
from mcap.summary import Summary

from robokit.converters.mcap.chunks import ChunkError, ChunkTable, LogTimeQueue, RawMessage, chunk_messages
from robokit.digest import source_digest
from robokit.errors import SourceError
from robokit.ros.bagdir import BagDir, Decompress, check_bag_counts, read_bag_dir
from robokit.ros.collect import Collector, Decode, Loaded, Scan
from robokit.ros.fields import ros_type, wrap_json
from robokit.ros.heads import HeadParser, headed
from robokit.ros.ros_types import ros_decoder, ros_head
from robokit.sources.perfile import PerFile
from robokit.sources.registry import ReadOptions
from robokit.sources.sniff import MCAP_MAGIC, is_mcap
from robokit.timeline import Episode, EpisodeMeta

Item = tuple[Schema | None, Channel, RawMessage]
# Channel metadata robokit's MCAP writer sets: the timeline channel of each default stream name (JSON), and
# why a topic is derived (such topics are not recorded streams and are skipped).
CHANNELS_KEY = "robokit.channels"
DERIVED_KEY = "robokit.derived"


def channel_type(schema: Schema | None) -> str:
    """The message type a channel's schema names ("" for schemaless channels)."""
    return schema.name if schema is not None else ""


def make_decoder(schema: Schema | None, channel: Channel, decompress: Decompress = None) -> Decode:
    """bytes → message object for one channel; raises when the encoding or schema is not usable."""
    encoding = channel.message_encoding
    decode: Decode
    if encoding == "json":
        decode = lambda raw: wrap_json(json.loads(raw))  # noqa: E731
    elif schema is None:
        raise ValueError(f"channel encoding {encoding!r} without a schema")
    elif encoding == "cdr" and schema.encoding in ("ros2msg", "ros2idl"):
        fmt = "idl" if schema.encoding == "ros2idl" else "msg"
        decode = ros_decoder(ros_type(schema.name), schema.data.decode(), fmt, "cdr")
    elif encoding == "ros1" and schema.encoding == "ros1msg":
        decode = ros_decoder(ros_type(schema.name), schema.data.decode(), "msg", "ros1")
    elif encoding == "protobuf":
        from mcap_protobuf.decoder import DecoderFactory  # imported on first use: it loads protobuf

        found = DecoderFactory().decoder_for(encoding, schema)
        if found is None:
            raise ValueError(f"protobuf channel with a {schema.encoding!r} schema")
        decode = found
    else:
        raise ValueError(f"unsupported message encoding {encoding!r} with schema encoding {schema.encoding!r}")
    if decompress is None:
        return decode
    return lambda raw: decode(decompress(raw))


class _Decoders:
    """Decoders keyed by channel content (schema and encoding), so they survive across files and passes."""

    def __init__(self, decompress: Decompress) -> None:
        self._decompress = decompress
        self._cache: dict[tuple[Any, ...], Decode] = {}

    def get(self, schema: Schema | None, channel: Channel) -> Decode:
        key = (channel.message_encoding, schema.name, schema.encoding, schema.data) if schema else (channel.id,)
        decode = self._cache.get(key)
        if decode is None:
            decode = self._cache[key] = make_decoder(schema, channel, self._decompress)
        return decode

    def head(self, schema: Schema | None, channel: Channel) -> HeadParser | None:
        """The header parser of a channel whose messages' headers can be read from their first bytes (see `heads`)."""
        if schema is None or self._decompress is not None or channel.message_encoding != "cdr":
            return None
        if schema.encoding not in ("ros2msg", "ros2idl"):
            return None
        fmt = "idl" if schema.encoding == "ros2idl" else "msg"
        return ros_head(ros_type(schema.name), schema.data.decode(), fmt, "cdr")


def _summary_crc_mismatch(f: IO[bytes]) -> str:
    """Why the summary section fails its footer CRC ("" when it matches or the writer recorded none)."""
    end = f.seek(0, 2) - len(MCAP_MAGIC)
    if end < 29 + len(MCAP_MAGIC):
        return ""
    f.seek(end - 29)  # the footer record: opcode, length, summary_start, summary_offset_start, summary_crc
    footer = f.read(29)
    start, expected = int.from_bytes(footer[9:17], "little"), int.from_bytes(footer[25:29], "little")
    if footer[0] != 0x02 or not start or not expected or start > end - 4:
        return ""
    f.seek(start)
    crc, left = 0, end - 4 - start
    while left > 0:
        block = f.read(min(left, 1 << 20))
        if not block:
            break
        crc, left = zlib.crc32(block, crc), left - len(block)
    return "" if crc == expected else f"summary section fails its CRC ({crc:#010x}, footer says {expected:#010x})"


class Index(NamedTuple):
    """A file's summary (its chunk indexes emptied) and those chunk indexes as a compact table."""

    summary: Summary
    chunks: ChunkTable


def indexed_reader(f: IO[bytes], verify: bool = True) -> tuple[Index | None, str]:
    """The file's summary and chunk table when it can be read through them, else why a linear scan is needed.

    With `verify`, a summary that fails its CRC is not trusted (the chunks carry their own copies)."""
    f.seek(0, 2)
    if f.tell() < 2 * len(MCAP_MAGIC):
        return None, "file too short for an MCAP footer"
    f.seek(-len(MCAP_MAGIC), 2)
    if f.read(len(MCAP_MAGIC)) != MCAP_MAGIC:
        return None, "no footer (unfinished or truncated recording)"
    if verify and (why := _summary_crc_mismatch(f)):
        return None, why
    try:
        summary, chunks = _read_summary(f)
    except Exception as err:  # a damaged footer or summary: the data section may still be fine
        return None, f"unreadable summary ({type(err).__name__}: {err})"
    if summary is None:
        return None, "no summary section"
    stats = summary.statistics
    if not len(chunks) and (stats is None or stats.message_count > 0):
        return None, "no chunk index"
    return Index(summary, chunks), ""


Damaged = Callable[[str], None]  # told about each damaged chunk skipped, by offset and reason


def _read_summary(f: IO[bytes]) -> tuple[Summary | None, ChunkTable]:
    """The summary section (None when the file has none), its chunk indexes compacted one by one as they are read:
    mcap's `get_summary` holds every ChunkIndex object at once (about 1 KiB each: 14 MiB for 40 minutes here)."""
    f.seek(-(FOOTER_SIZE + MAGIC_SIZE), io.SEEK_END)
    footer = next(StreamReader(f, skip_magic=True).records)
    if not isinstance(footer, Footer):
        raise McapError(f"expected a footer at the end of the file, found {type(footer).__name__}")
    if footer.summary_start == 0:
        return None, ChunkTable([])
    f.seek(footer.summary_start)
    summary = Summary()

    def chunk_indexes() -> Iterator[ChunkIndex]:
        for record in StreamReader(f, skip_magic=True).records:
            if isinstance(record, ChunkIndex):
                yield record
            elif isinstance(record, Footer):
                return
            elif isinstance(record, Statistics):
                summary.statistics = record
            elif isinstance(record, Schema):
                summary.schemas[record.id] = record
            elif isinstance(record, Channel):
                summary.channels[record.id] = record
            elif isinstance(record, AttachmentIndex):
                summary.attachment_indexes.append(record)
            elif isinstance(record, MetadataIndex):
                summary.metadata_indexes.append(record)

    return summary, ChunkTable(chunk_indexes())


def _chunk_records(f: IO[bytes], offset: int, chunk: Chunk, verify: bool, damaged: Damaged | None) -> list[Any]:
    """The records of one chunk, [] (reported to `damaged`) when it does not decompress, parse or match its CRC."""
    try:
        return breakup_chunk(chunk, validate_crc=verify)
    except Exception as err:
        if damaged is not None:
            damaged(f"damaged chunk at byte {offset} skipped ({type(err).__name__}: {err})")
        return []


def linear_records(
    f: IO[bytes],
    on_channel: Callable[[Schema | None, Channel], None] | None = None,
    warn: Callable[[str], None] | None = None,
    verify: bool = True,
) -> Generator[Item, None, None]:
    """All messages in file order by scanning records, stopping (with a warning) where the data ends early.

    A damaged chunk is skipped (told to `warn`), the records after it still read. `on_channel` sees every
    channel once, also those without messages."""
    f.seek(0)
    schemas: dict[int, Schema] = {}
    channels: dict[int, Channel] = {}
    count = 0
    try:
        for outer in StreamReader(f, emit_chunks=True).records:
            if isinstance(outer, DataEnd):  # the summary after it repeats what the data section held
                return
            if isinstance(outer, Chunk):  # the offset where the chunk record began: its end minus its size
                offset = f.tell() - (9 + 40 + len(outer.compression.encode()) + len(outer.data))
                inner = _chunk_records(f, offset, outer, verify, warn)
            else:
                inner = [outer]
            for record in inner:
                if isinstance(record, Schema):
                    schemas[record.id] = record
                elif isinstance(record, Channel) and record.id not in channels:
                    channels[record.id] = record
                    if on_channel is not None:
                        on_channel(schemas.get(record.schema_id), record)
                elif isinstance(record, Message) and record.channel_id in channels:
                    channel = channels[record.channel_id]
                    count += 1
                    message = RawMessage(record.channel_id, record.sequence, record.log_time, record.publish_time,
                                         record.data)
                    yield schemas.get(channel.schema_id), channel, message
    except Exception as err:  # unfinished recordings end mid-record
        if warn is not None:
            warn(f"data ends early after {count} messages ({type(err).__name__}: {err})")


def indexed_messages(
    f: IO[bytes],
    index: Index,
    topics: Collection[str] | None,
    start: int | None = None,
    verify: bool = True,
    damaged: Damaged | None = None,
    head: Callable[[int], int] | None = None,
) -> Generator[Item, None, None]:
    """The topics' messages through the chunk index in log-time order, from log time `start` on.

    Chunks are read as the order reaches them; a damaged one (CRC mismatch when `verify`, bad compression or
    records) is skipped and told to `damaged`, the other chunks still read. `head`: see `chunk_messages`."""
    summary = index.summary
    channels = summary.channels
    wanted = {c for c, ch in channels.items() if topics is None or ch.topic in topics}
    queue = LogTimeQueue(index.chunks.reaching(None if topics is None else wanted, start))
    while queue:
        item = queue.pop()
        if isinstance(item, RawMessage):
            channel = channels[item.channel_id]
            yield summary.schemas.get(channel.schema_id), channel, item
            continue
        offset = item
        try:
            found = chunk_messages(f, offset, verify, wanted.__contains__, head)
        except (ChunkError, OSError) as err:
            if damaged is not None:
                damaged(f"damaged chunk at byte {offset} skipped ({type(err).__name__}: {err})")
            continue
        for n, message in enumerate(found):
            if start is None or message.log_time >= start:
                queue.push_message(message, offset, n)


def _channel_names(channel: Channel) -> dict[str, str]:
    """The `robokit.channels` metadata of a channel written by robokit; {} when it does not parse."""
    try:
        names = json.loads(channel.metadata[CHANNELS_KEY])
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in names.items()} if isinstance(names, dict) else {}


def _index_file(path: Path, col: Collector, decoders: _Decoders, verify: bool, check_counts: bool) -> None:
    """Read one file's wanted messages into `col`; with `check_counts`, compare them with its Statistics."""
    by_channel: dict[int, Decode | None] = {}  # None: count only
    heads: dict[int, str] = {}  # channels whose messages may come as a Head → their topic

    def declare(schema: Schema | None, channel: Channel) -> None:
        by_channel[channel.id] = None
        if col.declare(channel.topic, channel_type(schema)):
            if DERIVED_KEY in channel.metadata:
                col.reject(channel.topic, f"derived by robokit: {channel.metadata[DERIVED_KEY]}", deliberate=True)
                return
            if CHANNELS_KEY in channel.metadata:
                col.rename(channel.topic, _channel_names(channel))
            try:
                by_channel[channel.id] = decode = decoders.get(schema, channel)
                parse = decoders.head(schema, channel)
            except Exception as err:
                col.reject(channel.topic, f"cannot decode {channel_type(schema) or 'schema'}: {err}")
                return
            if parse is not None:
                by_channel[channel.id], heads[channel.id] = partial(headed, parse, decode), channel.topic

    def head(channel_id: int) -> int:
        return col.head_bytes(heads.get(channel_id))

    def feed(channel: Channel, message: RawMessage) -> None:
        col.feed(channel.topic, message.log_time, message.data, by_channel[channel.id])

    def lost(what: str) -> None:
        col.lose("", f"{path.name}: {what}")

    with path.open("rb") as f:
        index, why = indexed_reader(f, verify)
        if index is None:
            col.warnings.append(f"{path.name}: {why}; read by a linear scan")
            for _, channel, message in linear_records(f, declare, lost, verify):
                feed(channel, message)
            return
        summary = index.summary
        for channel in summary.channels.values():
            declare(summary.schemas.get(channel.schema_id), channel)
        stats = summary.statistics
        topics: list[str] | None = None  # without statistics every message is read to count it
        if stats is not None:
            wanted = set(col.wanted())
            for channel in summary.channels.values():
                if channel.topic not in wanted:
                    col.add_count(channel.topic, stats.channel_message_counts.get(channel.id, 0))
            topics = sorted({c.topic for c in summary.channels.values() if c.topic in wanted})
            if not topics:
                return
        before = col.counts()
        try:  # log-time order reads chunks as it goes; insert order would queue every chunk up front
            for _, channel, message in indexed_messages(f, index, topics, None, verify, lost, head):
                feed(channel, message)
        except Exception as err:  # damaged data outside a chunk: keep the messages before it
            col.stopped(path.name, err)
        if stats is not None and check_counts and topics is not None:
            _check_statistics(path, col, summary, set(topics), before)


def _check_statistics(path: Path, col: Collector, summary: Summary, topics: set[str], before: dict[str, int]) -> None:
    """Compare the messages read from one file per topic with its Statistics record."""
    assert summary.statistics is not None
    expected: dict[str, int] = {}
    for cid, count in summary.statistics.channel_message_counts.items():
        channel = summary.channels.get(cid)
        if channel is not None and channel.topic in topics:
            expected[channel.topic] = expected.get(channel.topic, 0) + count
    after = col.counts()
    read = {t: after.get(t, 0) - before.get(t, 0) for t in expected}
    col.expect(expected, read, f"{path.name}'s statistics")


def scan_topic(files: Sequence[Path], verify: bool, topic: str, start: int | None) -> Generator[Item, None, None]:
    """The topic's messages in index-pass order (damaged chunks skipped alike), from log time `start` on."""
    for path in files:
        with path.open("rb") as f:
            index = _index(f, verify)
            if index is not None:
                yield from indexed_messages(f, index, [topic], start, verify)
                continue
            for item in linear_records(f, verify=verify):
                if item[1].topic == topic and (start is None or item[2].log_time >= start):
                    yield item


def _index(f: IO[bytes], verify: bool) -> Index | None:
    """The open file's index (None: read it linearly), parsed once for all the scans that re-read the file: an
    hour's summary takes a second to parse."""
    return _INDEXES.get(f, lambda: indexed_reader(f, verify)[0], verify)


_INDEXES: PerFile[Index | None] = PerFile(kept=8)


def _message(decoders: _Decoders, item: Item) -> Any:
    schema, channel, message = item
    return decoders.get(schema, channel)(message.data)


def load(
    files: Sequence[Path],
    mapping: dict[str, str],
    decompress: Decompress,
    label: str,
    verify: bool = True,
    bag_counts: dict[str, int] | None = None,
) -> Loaded:
    """The index pass over an MCAP recording (one or more files in order).

    What was read is compared with `bag_counts` (a ROS 2 bag's metadata.yaml), else with each file's
    Statistics; chunk CRCs are checked when `verify`."""
    decoders = _Decoders(decompress)

    def frames(topic: str) -> tuple[Scan, Decode]:
        return partial(scan_topic, files, verify, topic), partial(_message, decoders)

    col = Collector(mapping, frames, label)
    for path in files:
        try:
            _index_file(path, col, decoders, verify, bag_counts is None)
        except OSError as err:
            raise SourceError(f"{path}: cannot read ({err.strerror or err})") from err
    if bag_counts is not None:
        check_bag_counts(col, bag_counts)
    return col.finish()


def split_files(folder: Path) -> list[Path]:
    """The MCAP files of a folder without metadata.yaml (a split recording), in time order.

    Ordered by each file's first message time (its statistics, else its first message), then by name.
    Empty when the folder holds no MCAP file or also holds other files (besides hidden ones).
    """
    entries = [p for p in folder.iterdir() if not p.name.startswith(".")]
    if not entries or not all(p.is_file() and p.suffix.lower() == ".mcap" and is_mcap(p) for p in entries):
        return []
    return sorted(entries, key=lambda p: (_first_time(p), p.name))


def _first_time(path: Path) -> int:
    """The log time of a file's first message (statistics when indexed, else a linear read); 0 when unknown."""
    try:
        with path.open("rb") as f:
            index, _ = indexed_reader(f)
            stats = index.summary.statistics if index is not None else None
            if stats is not None and stats.message_count:
                return int(stats.message_start_time)
            f.seek(0)
            for _, _, message in linear_records(f):
                return int(message.log_time)
    except Exception:  # a damaged file sorts first; reading it reports the damage
        return 0
    return 0


def check_mcap(path: Path) -> None:
    """Raise SourceError unless `path` starts like an MCAP file (magic and a Header record)."""
    try:
        with path.open("rb") as f:
            make_reader(f).get_header()
    except Exception as err:
        raise SourceError(f"{path}: not a readable MCAP file ({type(err).__name__}: {err})") from err


class McapFormat:
    """Reader for MCAP files and ROS 2 bag directories in mcap storage."""

    name = "mcap"
    description = "MCAP file (.mcap) or ROS 2 bag directory with mcap storage"

    def sniff(self, path: Path) -> bool:
        if path.is_dir():
            try:
                bag = read_bag_dir(path)
            except SourceError:
                return False
            return bag.storage == "mcap" if bag is not None else bool(split_files(path))
        return is_mcap(path)

    def read(self, path: Path, options: ReadOptions) -> list[Episode]:
        bag: BagDir | None = read_bag_dir(path) if path.is_dir() else None
        if bag is not None:
            bag.check("mcap")
            files, digested, fmt, decompress = (
                list(bag.files),
                [bag.metadata, *bag.files],
                "rosbag2-mcap",
                bag.decompressor(),
            )
        elif path.is_dir():  # split files without metadata.yaml: one recording
            files = split_files(path)
            digested, fmt, decompress = files, "mcap-split", None
        else:
            files, digested, fmt, decompress = [path], [path], "mcap", None
        for f in files:
            check_mcap(f)
        meta = EpisodeMeta(
            source_uri=str(path.resolve()),
            episode_id=path.name if path.is_dir() else path.stem,
            source_version=source_digest(digested),
            source_format=fmt,
        )
        counts = dict(bag.counts) if bag else None
        loader = partial(load, files, dict(options.mapping), decompress, str(path), options.verify, counts)
        return [Episode(meta, loader=loader)]


MCAP_READER = McapFormat()
