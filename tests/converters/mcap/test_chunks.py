"""The direct chunk parser reads what mcap's own reader reads, in the same log-time order, for every compression."""

from __future__ import annotations

import io
import random
import struct
from pathlib import Path

import pytest
from mcap.reader import make_reader
from mcap.records import ChunkIndex
from mcap.writer import CompressionType, Writer

from robokit.converters.mcap.chunks import ChunkError, ChunkTable, chunk_records, read_chunk
from robokit.converters.mcap.reader import indexed_messages, indexed_reader


def _mcap(compression: CompressionType) -> bytes:
    """Three channels, out-of-order log times with ties, small chunks so messages overlap across chunks."""
    buf = io.BytesIO()
    w = Writer(buf, chunk_size=300, compression=compression)
    w.start()
    schema = w.register_schema("s", "jsonschema", b"{}")
    channels = [w.register_channel(f"/t{i}", "json", schema) for i in range(3)]
    rng = random.Random(0)
    for n in range(200):
        t = rng.randrange(50)  # many equal log times, written out of order
        w.add_message(channels[n % 3], log_time=t, data=b'{"n": %d}' % n + b" " * rng.randrange(200), publish_time=t)
    w.finish()
    return buf.getvalue()


@pytest.mark.parametrize("compression", [CompressionType.NONE, CompressionType.ZSTD, CompressionType.LZ4])
def test_same_messages_in_the_same_order_as_mcap(compression: CompressionType) -> None:
    f = io.BytesIO(_mcap(compression))
    reader = make_reader(f)
    summary = reader.get_summary()
    assert summary is not None and len(summary.chunk_indexes) > 10
    expected = [(c.topic, m.log_time, m.sequence, m.data) for _, c, m in reader.iter_messages(log_time_order=True)]
    index, why = indexed_reader(f)
    assert index is not None and len(index.chunks) == len(summary.chunk_indexes) and not why
    got = [(c.topic, m.log_time, m.sequence, m.data) for _, c, m in indexed_messages(f, index, None)]
    assert got == expected
    some = [e for e in expected if e[0] != "/t1" and e[1] >= 20]
    assert [(c.topic, m.log_time, m.sequence, m.data)
            for _, c, m in indexed_messages(f, index, ["/t0", "/t2"], start=20)] == some


def test_summary_read_as_mcap_reads_it() -> None:
    """The summary robokit reads record by record holds what mcap's `get_summary` holds (metadata and attachment
    indexes included), its chunk indexes as the table."""
    buf = io.BytesIO()
    w = Writer(buf, chunk_size=300)
    w.start()
    channel = w.register_channel("/t", "json", w.register_schema("s", "jsonschema", b"{}"))
    for n in range(50):
        w.add_message(channel, log_time=n, data=b"x" * 100, publish_time=n)
    w.add_metadata("m", {"k": "v"})
    w.add_attachment(create_time=0, log_time=0, name="a", media_type="text/plain", data=b"a")
    w.finish()
    buf.seek(0)
    expected = make_reader(buf).get_summary()
    assert expected is not None
    index, why = indexed_reader(buf)
    assert index is not None and not why and not index.summary.chunk_indexes
    got = index.summary
    assert (got.schemas, got.channels, got.statistics) == (expected.schemas, expected.channels, expected.statistics)
    assert (got.metadata_indexes, got.attachment_indexes) == (expected.metadata_indexes, expected.attachment_indexes)
    assert list(index.chunks.reaching(None, None)) == sorted((c.message_start_time, c.chunk_start_offset)
                                                            for c in expected.chunk_indexes)


def test_damaged_chunks_are_errors() -> None:
    data = _mcap(CompressionType.NONE)
    f = io.BytesIO(data)
    summary = make_reader(f).get_summary()
    assert summary is not None
    index = summary.chunk_indexes[0]
    body = bytearray(data[index.chunk_start_offset + 9: index.chunk_start_offset + index.chunk_length])
    body[-5] ^= 0xFF  # inside the last record's payload
    with pytest.raises(ChunkError, match="CRC mismatch"):
        chunk_records(bytes(body), verify=True)
    assert len(chunk_records(bytes(body), verify=False)) == index.uncompressed_size  # unchecked: read as it is
    with pytest.raises(ChunkError, match="cut short"):
        chunk_records(bytes(body[:-10]), verify=False)


def test_a_chunk_length_past_the_end_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "bad.mcap"
    path.write_bytes(b"\x06" + struct.pack("<Q", 1 << 40) + b"x" * 10)
    with path.open("rb") as f, pytest.raises(ChunkError, match="runs past the file's end"):
        read_chunk(f, 0, verify=True)


def test_chunk_table_selects_by_channel_and_end_time_in_start_order() -> None:
    def chunk(start: int, end: int, offset: int, channels: dict[int, int]) -> ChunkIndex:
        return ChunkIndex(message_start_time=start, message_end_time=end, chunk_start_offset=offset, chunk_length=1,
                          message_index_offsets=channels, message_index_length=0, compression="",
                          compressed_size=1, uncompressed_size=1)

    table = ChunkTable([chunk(5, 9, 300, {1: 0}), chunk(0, 4, 100, {2: 0}), chunk(5, 6, 200, {1: 0, 2: 0}),
                        chunk(7, 8, 400, {}), chunk(1 << 63, (1 << 64) - 1, 500, {3: 0})])
    assert list(table.reaching(None, None)) == [(0, 100), (5, 200), (5, 300), (7, 400), (1 << 63, 500)]
    assert list(table.reaching({1}, 6)) == [(5, 200), (5, 300), (7, 400)]  # no message index: may hold any
    assert list(table.reaching({2}, None)) == [(0, 100), (5, 200), (7, 400)]
    assert list(ChunkTable([]).reaching({1}, 0)) == []
    keys = [(channels, start) for channels in (None, frozenset({1}), frozenset({2}), frozenset({3}))
            for start in (None, 0, 6, 9, 1 << 63)]
    expected = {key: list(table.reaching(*key)) for key in keys}
    table.BLOCK = 2  # filtered a block at a time: the same chunks in the same order
    assert {key: list(table.reaching(*key)) for key in expected} == expected
