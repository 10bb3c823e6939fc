"""Real camera recordings written by other tools (tests/realdata/ros/SOURCES.md, "Cameras").

Every frame robokit reads equals the message as rosbags decodes it (raw rows reshaped here, JPEGs decoded by
Pillow); the MCAP export, read back with the mcap library and the Foxglove schemas, holds the same pixels and the
recorded JPEG bytes; the damaged image messages of rosbags-rs's test bags are skipped with a warning while the rest
exports.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mcap.reader import make_reader
from mcap_protobuf.decoder import DecoderFactory
from PIL import Image
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore

import robokit
from robokit.cli import main
from robokit.ros import heads
from robokit.timeline import ImageStream

REALSENSE, ARUCO, AIT = "librealsense_depth_color.bag", "fiducials_aruco_marker.bag", "ait_images"
# recording → {channel: source topic}
CAMERAS: dict[str, dict[str, str]] = {
    REALSENSE: {"device_0_sensor_1_Color_0/rgb": "/device_0/sensor_1/Color_0/image/data",
                "device_0_sensor_0_Depth_0/depth": "/device_0/sensor_0/Depth_0/image/data"},
    ARUCO: {"raspicam_node/rgb": "/raspicam_node/image/compressed"},
    AIT: {"camera/rgb": "/image"},
}
_RAW = {"rgb8": ("u1", 3), "mono8": ("u1", 1), "mono16": ("<u2", 1)}  # the encodings these recordings hold


def _messages(path: Path, topic: str) -> list[tuple[int, Any]]:
    """(log time, message) of a topic as rosbags reads it (the db3 stores no definitions: the default types)."""
    with AnyReader([path], default_typestore=get_typestore(Stores.ROS2_FOXY)) as reader:
        conns = [c for c in reader.connections if c.topic == topic]
        return [(t, reader.deserialize(raw, c.msgtype)) for c, t, raw in reader.messages(conns)]


def _pixels(msg: Any) -> np.ndarray:
    """A message's pixels, decoded here without robokit: JPEG by Pillow, raw rows cut to the width and reshaped."""
    if hasattr(msg, "format"):
        return np.asarray(Image.open(io.BytesIO(bytes(msg.data))).convert("RGB"))
    dtype, channels = _RAW[msg.encoding]
    rows = np.asarray(msg.data, np.uint8).reshape(msg.height, msg.step)[:, :msg.width * channels * int(dtype[-1])]
    return rows.copy().view(dtype).reshape((msg.height, msg.width, channels)[:3 if channels > 1 else 2])


@pytest.mark.parametrize("name", sorted(CAMERAS))
def test_frames_equal_the_source_messages(name: str, ros_roots: dict[str, Path],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Read by robokit's own message parser (`heads`), which these writers' type definitions must reach: a
    fallback to rosbags' decode would read the same pixels, with a copy."""
    parsed: list[bool] = []
    whole = heads._whole

    def counted(raw: Any, image: bool, cdr: bool) -> Any:
        found = whole(raw, image, cdr)
        parsed.append(found is not None)
        return found

    monkeypatch.setattr(heads, "_whole", counted)
    path = ros_roots[name]
    (ep,) = robokit.open(path)
    for channel, topic in CAMERAS[name].items():
        stream = ep.streams[channel]
        assert isinstance(stream, ImageStream) and stream.origin is not None and stream.origin.topic == topic
        source = _messages(path, topic)
        assert len(stream) == len(source)
        stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec if stream.origin.time_source == "header" else t
                  for t, m in source]
        assert stream.timestamps.tolist() == stamps
        for frame, (_, msg) in zip(stream.frames(), source, strict=True):
            np.testing.assert_array_equal(frame.array(), _pixels(msg), err_msg=channel)
            if hasattr(msg, "format"):  # the recorded JPEG is kept as is (`format` 'jpg' here, not 'jpeg')
                assert frame.data == bytes(msg.data)
    assert not [w for w in ep.warnings if "failed to decode" in w]
    assert parsed and all(parsed)


def test_realsense_cameras_get_their_calibration(ros_roots: dict[str, Path]) -> None:
    """librealsense records `<sensor>/info/camera_info` beside `<sensor>/image/data`, both images in frame '0'."""
    path = ros_roots[REALSENSE]
    (ep,) = robokit.open(path)
    assert not [s for s in ep.skipped if s.msgtype.endswith("CameraInfo")]
    # its ~60 option topics, logged at 1 ns, share one note: one line
    assert [w for w in ep.warnings if "last at 0.000 s" in w] == [
        "64 topics (/file_version, /device_0/sensor_0/Depth_0/info, /device_0/sensor_1/Color_0/info and 61 more): log "
        "timestamps near zero (simulation time or an unset clock, last at 0.000 s); kept as recorded"]
    for channel, topic in CAMERAS[REALSENSE].items():
        stream = ep.streams[channel]
        assert isinstance(stream, ImageStream) and stream.camera is not None
        ((_, info),) = _messages(path, topic.replace("image/data", "info/camera_info"))
        np.testing.assert_array_equal(stream.camera.k, np.asarray(info.K if hasattr(info, "K") else info.k)
                                      .reshape(3, 3))


def _written(mcap: Path) -> dict[str, list[Any]]:
    """The image messages of an exported MCAP by topic, decoded with the Foxglove protobuf schemas."""
    found: dict[str, list[Any]] = {topic: [] for topic in _image_topics(mcap)}
    with mcap.open("rb") as f:
        for _, channel, _, msg in make_reader(f, decoder_factories=[DecoderFactory()]).iter_decoded_messages(
                topics=list(found)):
            found[channel.topic].append(msg)
    return found


def _image_topics(mcap: Path) -> list[str]:
    with mcap.open("rb") as f:
        summary = make_reader(f).get_summary()
    assert summary is not None
    return [c.topic for c in summary.channels.values() if summary.schemas[c.schema_id].name.endswith("Image")]


@pytest.mark.parametrize("name", [REALSENSE, ARUCO])
def test_mcap_export_holds_the_recorded_pixels(tmp_path: Path, name: str, ros_roots: dict[str, Path]) -> None:
    path, out = ros_roots[name], tmp_path / "out"
    assert main(["convert", str(path), "--to", "mcap", "--out", str(out), "--no-cache", "--workers", "1"]) == 0
    written = _written(next((out / "mcap").glob("*.mcap")))
    assert len(written) == len(CAMERAS[name])
    for channel, topic in CAMERAS[name].items():
        (messages,) = [m for t, m in written.items() if t.startswith(f"/camera/{channel.split('/')[0]}/")]
        source = _messages(path, topic)
        assert len(messages) == len(source)
        for out_msg, (_, msg) in zip(messages, source, strict=True):
            if type(out_msg).__name__ == "RawImage":  # depth: uint16 samples, as recorded
                assert (out_msg.width, out_msg.height) == (msg.width, msg.height)
                got = np.frombuffer(out_msg.data, "<u2").reshape(out_msg.height, out_msg.step // 2)[:, :msg.width]
                np.testing.assert_array_equal(got, _pixels(msg))
            elif hasattr(msg, "format"):  # a recorded JPEG: its bytes copied, not re-encoded
                assert out_msg.data == bytes(msg.data) and out_msg.format == "jpeg"
            else:  # raw colour compressed for the viewer (JPEG): close to the recorded pixels
                assert out_msg.format == "jpeg"
                got = np.asarray(Image.open(io.BytesIO(out_msg.data)).convert("RGB"), np.float64)
                assert np.abs(got - _pixels(msg)).mean() < 3


@pytest.mark.parametrize("name", ["rosbags_rs_mcap", "rosbags_rs_sqlite3"])
def test_damaged_image_messages_are_skipped_and_the_rest_exports(tmp_path: Path, name: str,
                                                                 ros_roots: dict[str, Path]) -> None:
    """rosbags-rs's test bags: an rgb8 Image of 640x480 with 30 bytes of data, a 10-byte JPEG; both messages each."""
    path, out = ros_roots[name], tmp_path / "out"
    (ep,) = robokit.open(path)
    assert not [s for s in ep.streams.values() if isinstance(s, ImageStream)]
    skipped = {s.topic: s for s in ep.skipped}
    raw, jpeg = skipped["/test/sensor_msgs/image"], skipped["/test/sensor_msgs/compressed_image"]
    assert raw.count == 2 and raw.reason == ("2 of 2 messages failed to decode (ValueError: image data of 30 bytes "
                                             "is too short for 640x480 rgb8 step 1920)")
    assert jpeg.count == 2 and jpeg.reason.startswith("2 of 2 messages failed to decode")
    assert main(["convert", str(path), "--to", "mcap", "--out", str(out), "--no-cache", "--workers", "1"]) == 0
    report = json.loads((out / "export.json").read_text())
    assert report["formats"]["mcap"]["status"] == "written"
    warnings = json.dumps(report)
    assert "/test/sensor_msgs/image" in warnings and "too short for 640x480" in warnings
    assert not _image_topics(next((out / "mcap").glob("*.mcap")))
