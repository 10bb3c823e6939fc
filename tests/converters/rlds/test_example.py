"""The Example codec against protobuf itself (message classes built from the .proto's descriptor)."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from robokit.converters.rlds import example
from robokit.converters.rlds.example import (
    decode_example,
    decode_varints,
    encode_example,
    encode_varints,
    read_features,
)
from robokit.converters.rlds.records import iter_records, masked_crc, record_offsets, write_record
from robokit.errors import SourceError


def _example_class() -> Any:
    """tf.train.Example from the fields of tensorflow/core/example/{example,feature}.proto."""
    fd = descriptor_pb2.FileDescriptorProto(name="robokit_test_example.proto", package="rktest", syntax="proto3")
    T = descriptor_pb2.FieldDescriptorProto
    for name, typ in (("BytesList", T.TYPE_BYTES), ("FloatList", T.TYPE_FLOAT), ("Int64List", T.TYPE_INT64)):
        m = fd.message_type.add(name=name)
        m.field.add(name="value", number=1, type=typ, label=T.LABEL_REPEATED)
    feature = fd.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    for number, (name, typ) in enumerate((("bytes_list", "BytesList"), ("float_list", "FloatList"),
                                           ("int64_list", "Int64List")), 1):
        feature.field.add(name=name, number=number, type=T.TYPE_MESSAGE, type_name=f".rktest.{typ}",
                          label=T.LABEL_OPTIONAL, oneof_index=0)
    features = fd.message_type.add(name="Features")
    entry = features.nested_type.add(name="FeatureEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=T.TYPE_STRING, label=T.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=T.TYPE_MESSAGE, type_name=".rktest.Feature", label=T.LABEL_OPTIONAL)
    features.field.add(name="feature", number=1, type=T.TYPE_MESSAGE, type_name=".rktest.Features.FeatureEntry",
                       label=T.LABEL_REPEATED)
    example = fd.message_type.add(name="Example")
    example.field.add(name="features", number=1, type=T.TYPE_MESSAGE, type_name=".rktest.Features",
                      label=T.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("rktest.Example"))


EXAMPLE = _example_class()
FEATURES = {
    "steps/action": np.array([0.1, -2.5, 3e9], dtype=np.float32),
    "steps/action_delta": np.zeros(0, dtype=np.float32),  # empty list, and `steps/action` is a prefix of it
    "steps/is_first": np.array([True, False, False]),
    "ints": np.array([0, 1, 127, 128, 300, -1, -(2**63), 2**63 - 1], dtype=np.int64),
    "steps/image": [b"\xff\xd8jpeg", b"", bytes(range(256)) * 3],
    "a": [b"x"],
    "ab": np.array([5], dtype=np.int64),
}


def _reference(features: dict[str, Any]) -> Any:
    msg = EXAMPLE()
    for key, value in features.items():
        f = msg.features.feature[key]
        if isinstance(value, list):
            f.bytes_list.value.extend(value)
        elif value.dtype.kind == "f":
            f.float_list.value.extend(value.tolist())
            f.float_list.SetInParent()
        else:
            f.int64_list.value.extend(int(v) for v in value)
            f.int64_list.SetInParent()
        if isinstance(value, list) and not value:
            f.bytes_list.SetInParent()
    return msg


def test_encoder_matches_protobuf_deterministic_bytes() -> None:
    chunks, size = encode_example(FEATURES)
    data = b"".join(chunks)
    assert len(data) == size
    assert data == _reference(FEATURES).SerializeToString(deterministic=True)


@pytest.mark.parametrize("block", [1 << 20, 12])  # 12 bytes: one row of 3 per block, a row cut at the last
def test_float_columns_converted_a_block_at_a_time(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(example, "FLOAT_BLOCK", block)
    rng = np.random.default_rng(3)
    features = {"steps/state": rng.normal(size=(7, 3)), "steps/reward": np.arange(5, dtype=np.float64) / 3,
                "one": np.array(2.5), "none": np.zeros((0, 3))}
    chunks, size = encode_example(features)
    data = b"".join(chunks)
    reference = {k: np.atleast_1d(v).astype(np.float32).ravel() for k, v in features.items()}
    assert len(data) == size and data == _reference(reference).SerializeToString(deterministic=True)


def test_decoder_reads_protobuf_output() -> None:
    decoded = decode_example(_reference(FEATURES).SerializeToString())
    assert set(decoded) == set(FEATURES)
    for key, value in FEATURES.items():
        got = decoded[key]
        if isinstance(value, list):
            assert got == value
        else:
            assert isinstance(got, np.ndarray)
            assert np.array_equal(got, value.astype(got.dtype))


def test_varints_round_trip_vectorised() -> None:
    values = np.array([0, 1, 127, 128, 16383, 16384, 2**35, -1, -(2**63), 2**63 - 1], dtype=np.int64)
    assert np.array_equal(decode_varints(encode_varints(values)), values)
    assert encode_varints(np.array([1, 0, 1])) == b"\x01\x00\x01"


def test_read_features_skips_unwanted_features_unread() -> None:
    chunks, size = encode_example(FEATURES)
    buf = io.BytesIO()
    write_record(buf, chunks, size)
    buf.seek(0)
    got = read_features(buf, 12, size, {"ab", "steps/image"})
    assert set(got) == {"ab", "steps/image"} and got["steps/image"] == FEATURES["steps/image"]


def test_records_crc_and_corruption(tmp_path: Any) -> None:
    assert masked_crc(b"") == 0xA282EAD8  # the CRC-32C of nothing is 0: only the mask delta remains
    path = tmp_path / "x.tfrecord"
    with path.open("wb") as f:
        for payload in (b"first", b"", b"third" * 100):
            write_record(f, [payload[:2], payload[2:]], len(payload))
    assert list(iter_records(path)) == [b"first", b"", b"third" * 100]
    assert [length for _, length in record_offsets(path)] == [5, 0, 500]
    data = bytearray(path.read_bytes())
    data[14] ^= 0xFF  # inside the first payload
    path.write_bytes(bytes(data))
    with pytest.raises(SourceError, match="payload CRC"):
        list(iter_records(path))
    path.write_bytes(bytes(data[:-3]))
    with pytest.raises(SourceError, match="truncated"):
        list(iter_records(path, verify=False))
