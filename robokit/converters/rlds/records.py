"""TFRecord framing: length, masked CRC32C of the length, payload, masked CRC32C of the payload.

The same framing `tf.io.TFRecordWriter` writes, so TensorFlow verifies our CRCs when it reads.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

import crc32c

from robokit.errors import SourceError

_MASK_DELTA = 0xA282EAD8
_LENGTH = struct.Struct("<Q")
_CRC = struct.Struct("<I")
HEADER_BYTES = _LENGTH.size + _CRC.size
FOOTER_BYTES = _CRC.size


def _mask(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def masked_crc(data: bytes | memoryview) -> int:
    """CRC-32C of `data`, rotated and offset as TFRecord stores it."""
    return _mask(crc32c.crc32c(data))


def record_header(length: int) -> bytes:
    """The 12 bytes before a payload: its length and the length's masked CRC."""
    raw = _LENGTH.pack(length)
    return raw + _CRC.pack(masked_crc(raw))


def write_record(out: BinaryIO, chunks: Iterable[bytes], size: int) -> int:
    """Frame one payload given as chunks (their total is `size`) into `out`; returns the bytes written."""
    out.write(record_header(size))
    crc = 0
    for chunk in chunks:
        out.write(chunk)
        crc = crc32c.crc32c(chunk, crc)
    out.write(_CRC.pack(_mask(crc)))
    return framed_size(size)


def framed_size(payload_len: int) -> int:
    return HEADER_BYTES + payload_len + FOOTER_BYTES


def record_offsets(path: Path) -> list[tuple[int, int]]:
    """(payload offset, payload length) of every record, read from the headers alone (payloads are skipped)."""
    out: list[tuple[int, int]] = []
    size = path.stat().st_size
    with path.open("rb") as f:
        pos = 0
        while pos < size:
            header = f.read(HEADER_BYTES)
            length = _check_header(header, path, pos)
            if pos + HEADER_BYTES + length + FOOTER_BYTES > size:
                raise SourceError(f"{path}: record at byte {pos} is truncated")
            out.append((pos + HEADER_BYTES, length))
            pos += HEADER_BYTES + length + FOOTER_BYTES
            f.seek(pos)
    return out


def read_payload(path: Path, offset: int, length: int, verify: bool = True) -> bytes:
    """The payload at `offset` (from `record_offsets`), its CRC checked unless `verify` is False."""
    with path.open("rb") as f:
        f.seek(offset)
        data = f.read(length + FOOTER_BYTES)
    payload = data[:length]
    if len(payload) != length:
        raise SourceError(f"{path}: record at byte {offset} is truncated")
    if verify and _CRC.unpack(data[length:])[0] != masked_crc(payload):
        raise SourceError(f"{path}: payload CRC mismatch in the record at byte {offset - HEADER_BYTES}")
    return payload


def iter_records(path: Path, verify: bool = True) -> Iterator[bytes]:
    """Every payload of a TFRecord file in order, both CRCs checked unless `verify` is False."""
    with path.open("rb") as f:
        pos = 0
        while header := f.read(HEADER_BYTES):
            length = _check_header(header, path, pos, verify)
            data = f.read(length + FOOTER_BYTES)
            if len(data) != length + FOOTER_BYTES:
                raise SourceError(f"{path}: record at byte {pos} is truncated")
            payload = data[:length]
            if verify and _CRC.unpack(data[length:])[0] != masked_crc(payload):
                raise SourceError(f"{path}: payload CRC mismatch in the record at byte {pos}")
            pos += HEADER_BYTES + length + FOOTER_BYTES
            yield payload


def _check_header(header: bytes, path: Path, pos: int, verify: bool = True) -> int:
    if len(header) != HEADER_BYTES:
        raise SourceError(f"{path}: record header at byte {pos} is truncated")
    raw = header[: _LENGTH.size]
    if verify and _CRC.unpack(header[_LENGTH.size :])[0] != masked_crc(raw):
        raise SourceError(f"{path}: length CRC mismatch at byte {pos} (not a TFRecord file?)")
    return int(_LENGTH.unpack(raw)[0])
