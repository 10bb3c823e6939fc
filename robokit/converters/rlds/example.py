"""`tf.train.Example` in protobuf wire format, encoded and decoded with numpy (no TensorFlow).

The encoder emits exactly what protobuf's deterministic serializer emits for the same features
(TFDS serializes that way), as chunks so large image payloads are never copied into one buffer.
The decoder accepts any valid encoding (packed or not, any field order).
"""

from __future__ import annotations

import itertools
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from typing import BinaryIO

import numpy as np

from robokit import heap
from robokit.converters.spill import SpilledFrames
from robokit.errors import SourceError

# A feature value: encoded bytes per element (BytesList), float32 (FloatList) or int64 (Int64List).
Value = list[bytes] | np.ndarray
Feature = Sequence[bytes] | np.ndarray  # what the encoder takes: any sequence of encoded elements
_BYTES, _FLOAT, _INT64 = 1, 2, 3
FLOAT_BLOCK = 1 << 20  # bytes of a float feature converted at once
_SHIFTS = np.arange(10, dtype=np.uint64) * np.uint64(7)


def varint(n: int) -> bytes:
    """One unsigned varint."""
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode_varints(values: np.ndarray) -> bytes:
    """Packed varints of int64 values (negative ones as 10-byte two's complement), vectorised."""
    u = np.ascontiguousarray(values).ravel()
    u = u.astype(np.uint64) if u.dtype == np.uint64 else u.astype(np.int64).view(np.uint64)
    if u.size == 0:
        return b""
    if bool((u < 128).all()):
        return u.astype(np.uint8).tobytes()
    groups = ((u[:, None] >> _SHIFTS) & np.uint64(0x7F)).astype(np.uint8)
    count = np.maximum(1, ((u[:, None] >> _SHIFTS) != 0).sum(axis=1))
    j = np.arange(10)[None, :]
    groups |= np.where(j < (count - 1)[:, None], 0x80, 0).astype(np.uint8)
    packed: bytes = groups[j < count[:, None]].tobytes()
    return packed


def decode_varints(buf: bytes | memoryview) -> np.ndarray:
    """Packed varints → int64 array, vectorised."""
    b = np.frombuffer(buf, dtype=np.uint8)
    if b.size == 0 or bool((b < 128).all()):
        return b.astype(np.int64)
    ends = np.flatnonzero(b < 128)
    if ends.size == 0 or ends[-1] != b.size - 1:
        raise SourceError("malformed Example: truncated varint")
    starts = np.concatenate([[0], ends[:-1] + 1])
    pos = np.arange(b.size) - np.repeat(starts, ends - starts + 1)
    parts = (b & 0x7F).astype(np.uint64) << (pos.astype(np.uint64) * np.uint64(7))
    return np.add.reduceat(parts, starts).view(np.int64)


def _float32_blocks(value: np.ndarray) -> Iterator[bytes]:
    """`value` as little-endian float32 bytes, `FLOAT_BLOCK` bytes of it made at a time as they are written (an
    episode's columns are never whole in memory twice)."""
    rows = max(1, FLOAT_BLOCK // max(1, 4 * value[0].size)) if len(value) else 1
    for block in heap.blocks(value, rows):
        yield np.ascontiguousarray(block, dtype="<f4").tobytes()


def _list_payload(value: Feature) -> tuple[int, Iterable[bytes], int]:
    """(Feature field number, payload chunks, payload size) of one feature value; frames of a `SpilledFrames`
    are read one at a time as the chunks are consumed."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            field, size = _FLOAT, value.size * 4
            data: Iterable[bytes] = _float32_blocks(np.atleast_1d(value))
        elif value.dtype.kind in "biu":
            encoded = encode_varints(value)
            field, size, data = _INT64, len(encoded), [encoded]
        else:
            raise TypeError(f"cannot store dtype {value.dtype} in a tf.train.Example")
        if not size:
            return field, [], 0
        head = b"\x0a" + varint(size)
        return field, itertools.chain((head,), data), len(head) + size
    lengths = value.lengths if isinstance(value, SpilledFrames) else [len(item) for item in value]
    size = sum(1 + len(varint(int(n))) + int(n) for n in lengths)
    parts = (part for n, item in zip(lengths, value, strict=True) for part in (b"\x0a" + varint(int(n)), item))
    return _BYTES, parts, size


def _map_order(key: str) -> bytes:
    """protobuf's deterministic map order: ascending, except that a key follows the keys it is a strict prefix of."""
    return key.encode() + b"\xff"


def encode_example(features: Mapping[str, Feature]) -> tuple[Iterable[bytes], int]:
    """A serialized Example as (chunks, total size); `b"".join(chunks)` is the message. The chunks are
    produced as they are consumed, so spilled image frames are never all in memory."""
    body: list[Iterable[bytes]] = []
    body_size = 0
    for key in sorted(features, key=_map_order):
        field, payload, size = _list_payload(features[key])
        list_head = bytes([field << 3 | 2]) + varint(size)
        feature_size = len(list_head) + size
        key_bytes = key.encode()
        key_part = b"\x0a" + varint(len(key_bytes)) + key_bytes
        value_head = b"\x12" + varint(feature_size)
        entry_size = len(key_part) + len(value_head) + feature_size
        entry_head = b"\x0a" + varint(entry_size)
        body += ((entry_head, key_part, value_head, list_head), payload)
        body_size += len(entry_head) + entry_size
    head = b"\x0a" + varint(body_size)
    return itertools.chain((head,), *body), len(head) + body_size


def _read_varint(buf: memoryview, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise SourceError("malformed Example: truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def _fields(buf: memoryview) -> list[tuple[int, int, memoryview | int]]:
    """(field number, wire type, value) of every field of one message: slices for length-delimited ones."""
    out: list[tuple[int, int, memoryview | int]] = []
    pos = 0
    while pos < len(buf):
        tag, pos = _read_varint(buf, pos)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = _read_varint(buf, pos)
            out.append((field, wire, value))
        elif wire == 2:
            n, pos = _read_varint(buf, pos)
            if pos + n > len(buf):
                raise SourceError("malformed Example: field runs past the message")
            out.append((field, wire, buf[pos : pos + n]))
            pos += n
        elif wire in (1, 5):
            n = 8 if wire == 1 else 4
            out.append((field, wire, buf[pos : pos + n]))
            pos += n
        else:
            raise SourceError(f"malformed Example: wire type {wire}")
    return out


def _decode_list(kind: int, buf: memoryview) -> Value:
    if kind == _BYTES:
        return [bytes(v) for f, _, v in _fields(buf) if f == 1 and isinstance(v, memoryview)]
    pieces: list[np.ndarray] = []  # packed runs, or single unpacked values (fixed32 floats / varint ints)
    for f, _, v in _fields(buf):
        if f != 1:
            continue
        if kind == _FLOAT:
            pieces.append(np.frombuffer(v, dtype="<f4") if isinstance(v, memoryview) else np.zeros(0, "<f4"))
        elif isinstance(v, memoryview):
            pieces.append(decode_varints(v))
        else:
            pieces.append(np.array([v], dtype=np.uint64).view(np.int64))
    dtype = np.float32 if kind == _FLOAT else np.int64
    return np.concatenate(pieces).astype(dtype) if pieces else np.zeros(0, dtype=dtype)


def _entry(entry: memoryview, keys: Container[str] | None) -> tuple[str, Value] | None:
    """(key, value) of one Features map entry, None when its key is not wanted."""
    key, feature = "", None
    for h, _, part in _fields(entry):
        if h == 1 and isinstance(part, memoryview):
            key = bytes(part).decode()
        elif h == 2 and isinstance(part, memoryview):
            feature = part
    if keys is not None and key not in keys:
        return None
    value: Value = []
    for kind, _, payload in _fields(feature) if feature is not None else []:
        if kind in (_BYTES, _FLOAT, _INT64) and isinstance(payload, memoryview):
            value = _decode_list(kind, payload)
    return key, value


def decode_example(data: bytes | memoryview, keys: Container[str] | None = None) -> dict[str, Value]:
    """Features of a serialized Example: list of bytes, float32 array or int64 array per key.

    With `keys`, only those features are decoded (others are skipped without copying).
    """
    out: dict[str, Value] = {}
    for f, _, features in _fields(memoryview(data)):
        if f != 1 or not isinstance(features, memoryview):
            continue
        for g, _, entry in _fields(features):
            if g == 1 and isinstance(entry, memoryview) and (item := _entry(entry, keys)) is not None:
                out[item[0]] = item[1]
    return out


def as_sequence(value: Value) -> Sequence[bytes]:
    """A BytesList value (raises for numeric ones: the feature has another type than expected)."""
    if isinstance(value, np.ndarray):
        raise SourceError("expected a bytes feature, found a numeric one")
    return value


def _file_varint(f: BinaryIO) -> int:
    result = shift = 0
    while True:
        b = f.read(1)
        if not b:
            raise SourceError("malformed Example: truncated varint")
        result |= (b[0] & 0x7F) << shift
        if b[0] < 0x80:
            return result
        shift += 7


def read_features(f: BinaryIO, offset: int, length: int, keys: Container[str]) -> dict[str, Value]:
    """Decode only `keys` of the Example stored at `offset` in an open file, seeking past the other features.

    Reads a few bytes per feature instead of the whole record (images are skipped unread); CRCs are not checked.
    """
    f.seek(offset)
    end = offset + length
    if f.read(1) != b"\x0a":
        f.seek(offset)
        return decode_example(f.read(length), keys)
    _file_varint(f)
    out: dict[str, Value] = {}
    while f.tell() < end:
        if f.read(1) != b"\x0a":
            raise SourceError("malformed Example: unexpected field in Features")
        entry_len = _file_varint(f)
        start = f.tell()
        if f.read(1) == b"\x0a":
            key = f.read(_file_varint(f)).decode()
            if key not in keys:
                f.seek(start + entry_len)
                continue
        f.seek(start)
        if (item := _entry(memoryview(f.read(entry_len)), keys)) is not None:
            out[item[0]] = item[1]
    return out
