"""`robokit info` and `robokit convert` name a damaged chunk; `--no-verify` skips the CRC check."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from mcap.writer import CompressionType, Writer

from robokit.cli import main
from robokit.ros.bagwriter import START_NS, header, joint_state, typestore

JS = "sensor_msgs/msg/JointState"


def crc_damaged_mcap(path: Path, n: int = 30, bad: int = 12) -> Path:
    """An MCAP of `n` JointStates in small uncompressed chunks, one position value of message `bad` altered."""
    ts = typestore()
    payloads = [bytes(ts.serialize_cdr(joint_state(ts, header(ts, START_NS + i, "base"), ("a",),
                                                   np.array([float(i) + 0.5])), JS)) for i in range(n)]
    with path.open("wb") as f:
        writer = Writer(f, chunk_size=300, compression=CompressionType.NONE)
        writer.start(profile="ros2", library="robokit-tests")
        schema = writer.register_schema(JS, "ros2msg", ts.generate_msgdef(JS, ros_version=2)[0].encode())
        channel = writer.register_channel("/joint_states", "cdr", schema)
        for i, data in enumerate(payloads):
            writer.add_message(channel, log_time=START_NS + i * 10_000_000, data=data, publish_time=0)
        writer.finish()
    data = bytearray(path.read_bytes())
    at = data.find(payloads[bad]) + payloads[bad].find(np.float64(bad + 0.5).tobytes())
    data[at + 7] ^= 0x40  # the value's exponent: the message still decodes, only the chunk CRC tells
    path.write_bytes(bytes(data))
    return path


def test_info_and_convert_name_the_damaged_chunk(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = crc_damaged_mcap(tmp_path / "bad.mcap")
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "bad.mcap: damaged chunk at byte" in out and "CRC" in out and "incomplete:" in out
    assert main(["info", str(path), "--no-verify"]) == 0
    out = capsys.readouterr().out
    assert "damaged" not in out and "incomplete" not in out

    for flags, complete in (([], False), (["--no-verify"], True)):
        out = tmp_path / f"out{len(flags)}"
        assert main(["convert", str(path), "--to", "mcap", "--out", str(out), "--no-cache", *flags]) == 0
        item = json.loads((out / "export.json").read_text())["items"][0]
        assert item["complete"] is complete
        assert any("damaged chunk at byte" in w for w in item["warnings"]) is not complete
