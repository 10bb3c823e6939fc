"""MCAP reader: ROS 2 bags in mcap storage, Foxglove protobuf and JSON files, unfinished files, bad channels."""

from __future__ import annotations

import base64
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from foxglove_schemas_protobuf.CameraCalibration_pb2 import CameraCalibration
from foxglove_schemas_protobuf.CompressedImage_pb2 import CompressedImage
from foxglove_schemas_protobuf.FrameTransform_pb2 import FrameTransform
from foxglove_schemas_protobuf.FrameTransforms_pb2 import FrameTransforms
from foxglove_schemas_protobuf.JointState_pb2 import JointState
from foxglove_schemas_protobuf.JointStates_pb2 import JointStates
from foxglove_schemas_protobuf.Log_pb2 import Log
from foxglove_schemas_protobuf.Pose_pb2 import Pose
from foxglove_schemas_protobuf.PoseInFrame_pb2 import PoseInFrame
from foxglove_schemas_protobuf.PosesInFrame_pb2 import PosesInFrame
from foxglove_schemas_protobuf.Quaternion_pb2 import Quaternion
from foxglove_schemas_protobuf.RawImage_pb2 import RawImage
from foxglove_schemas_protobuf.Vector3_pb2 import Vector3
from google.protobuf.timestamp_pb2 import Timestamp
from mcap.writer import Writer
from rosbags.typesys import Stores, get_typestore

import robokit
from robokit.errors import SourceError
from robokit.timeline import EventStream, ImageStream, NumericStream, PoseStream
from robokit.timeline.images import encode_image

T0 = 1_700_000_000_000_000_000
MS = 1_000_000


def stamp(ns: int) -> Timestamp:
    ts = Timestamp()
    ts.FromNanoseconds(ns)
    return ts


def raw_image(ns: int, pixels: np.ndarray, encoding: str = "rgb8", pad: int = 0) -> RawImage:
    h, w = pixels.shape[:2]
    rows = np.concatenate([pixels.reshape(h, -1).view(np.uint8), np.zeros((h, pad), np.uint8)], axis=1)
    return RawImage(
        timestamp=stamp(ns),
        frame_id="top_optical",
        width=w,
        height=h,
        encoding=encoding,
        step=rows.shape[1],
        data=rows.tobytes(),
    )


def frame_tf(ns: int, parent: str, child: str, x: float) -> FrameTransform:
    return FrameTransform(
        timestamp=stamp(ns),
        parent_frame_id=parent,
        child_frame_id=child,
        translation=Vector3(x=x, y=0, z=0),
        rotation=Quaternion(x=0, y=0, z=0, w=1),
    )


def test_ros2_mcap_bag_directory(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    bag = bags.write_ros2(tmp_path / "run", bags.scenario(ros2_msgs), ros2_msgs.ts, "mcap")
    (ep,) = robokit.open(bag)
    assert "not loaded" in repr(ep)  # the index pass waits for the first access
    assert (ep.id, ep.meta.source_format, ep.meta.source_uri) == ("run", "rosbag2-mcap", str(bag.resolve()))
    assert ep.meta.source_version.startswith("s2:")
    bags.check_scenario(ep)


def test_bare_mcap_file_of_a_bag(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    bag = bags.write_ros2(tmp_path / "run", bags.scenario(ros2_msgs), ros2_msgs.ts, "mcap")
    (storage,) = bag.glob("*.mcap")
    ep = bags.open_one(storage)
    assert (ep.id, ep.meta.source_format) == (storage.stem, "mcap")
    bags.check_scenario(ep)


@pytest.mark.parametrize("ros1", [False, True])
def test_plain_mcap_with_ros_schemas(tmp_path: Path, bags: Any, ros1_msgs: Any, ros2_msgs: Any, ros1: bool) -> None:
    msgs = ros1_msgs if ros1 else ros2_msgs
    records = bags.scenario(msgs, "tf/msg/tfMessage" if ros1 else "tf2_msgs/msg/TFMessage")
    path = bags.write_mcap_ros(tmp_path / "ros.mcap", sorted(records, key=lambda r: r[2]), msgs.ts, ros1)
    bags.check_scenario(bags.open_one(path))


def test_split_bag_reads_as_one_episode(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    def part(name: str, first: int) -> Path:
        records = [
            ("/camera/front/image_raw", "sensor_msgs/msg/Image", bags.T0 + i * bags.MS,
             ros2_msgs.image(bags.T0 + i * bags.MS, bags.front_pixels(i), "rgb8"))
            for i in range(first, first + 3)
        ]  # fmt: skip
        return bags.write_ros2(tmp_path / name, records, ros2_msgs.ts, "mcap")

    bag, second = part("split", 0), part("second", 3)
    (extra,) = second.glob("*.mcap")
    extra.rename(bag / "split_1.mcap")
    meta = yaml.safe_load((bag / "metadata.yaml").read_text())
    meta["rosbag2_bagfile_information"]["relative_file_paths"].append("split_1.mcap")
    (bag / "metadata.yaml").write_text(yaml.safe_dump(meta))
    front = bags.open_one(bag)["front/rgb"]
    assert len(front) == 6
    order = [5, 1, 3, 4, 0]
    assert all(np.array_equal(f.array(), bags.front_pixels(i)) for f, i in zip(front.frames(order), order, strict=True))


def test_split_files_without_metadata_are_one_recording(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    """Read in time order whatever the names (`b_0` holds the later half): frames and samples as in one file."""
    records = bags.scenario(ros2_msgs)
    cut = bags.T0 + 15 * bags.MS + bags.LAG
    folder = tmp_path / "split"
    folder.mkdir()
    records.sort(key=lambda r: r[2])
    bags.write_mcap_ros(folder / "a_1.mcap", [r for r in records if r[2] < cut], ros2_msgs.ts)
    bags.write_mcap_ros(folder / "b_0.mcap", [r for r in records if r[2] >= cut], ros2_msgs.ts)
    (folder / "a_1.mcap").rename(folder / "c_1.mcap")
    (ep,) = robokit.open(folder)
    assert (ep.id, ep.meta.source_format) == ("split", "mcap-split")
    bags.check_scenario(ep)
    (folder / "notes.txt").write_text("not a recording")
    with pytest.raises(SourceError):
        robokit.open(folder)


def test_damaged_chunk_keeps_what_came_before(tmp_path: Path, bags: Any) -> None:
    records = [
        ("/camera/top/image", raw_image(T0 + i * MS, np.full((16, 16, 3), i, np.uint8)), T0 + i * MS) for i in range(20)
    ]
    path = bags.write_foxglove(tmp_path / "bad.mcap", records, chunk_size=1000)
    data = bytearray(path.read_bytes())
    middle = len(data) // 3
    data[middle : middle + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))
    ep = bags.open_one(path)
    assert any("damaged chunk at byte" in w for w in ep.warnings), ep.warnings
    top = ep["top/rgb"]
    assert 0 < len(top) < 20 and top.timestamps[-1] == T0 + 19 * MS  # the chunks after the damage are read
    lost = sum(x.messages or 0 for x in ep.losses if x.topic == "/camera/top/image")
    assert not ep.complete and lost == 20 - len(top)  # counted by the file's statistics
    assert len(list(top.frames())) == len(top)  # frames re-read past the same damaged chunk
    assert len(bags.open_one(path, verify=False)["top/rgb"]) <= len(top)


def test_frame_memory_does_not_grow_with_the_recording(tmp_path: Path, bags: Any) -> None:
    rng = np.random.default_rng(0)
    records = [
        ("/camera/top/image", raw_image(T0 + i * MS, rng.integers(0, 255, (32, 32, 3), dtype=np.uint8)), T0 + i * MS)
        for i in range(400)
    ]
    top = bags.open_one(bags.write_foxglove(tmp_path / "long.mcap", records, chunk_size=8192))["top/rgb"]
    tracemalloc.start()
    try:
        assert sum(f.array().nbytes for f in top.frames()) == 400 * 32 * 32 * 3
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 400 * 32 * 32 * 3 / 4  # the index of chunks, one chunk and one frame; not the pixels


def test_frames_in_any_order(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    bag = bags.write_ros2(tmp_path / "run", bags.scenario(ros2_msgs), ros2_msgs.ts, "mcap")
    front = bags.open_one(bag)["front/rgb"]
    got = [f.array() for f in front.frames([2, 0, 1, 1, 2, 0])]
    assert all(np.array_equal(g, bags.front_pixels(i)) for g, i in zip(got, [2, 0, 1, 1, 2, 0], strict=True))


def foxglove_records(jpeg: bytes) -> list[tuple[str, Any, int]]:
    out: list[tuple[str, Any, int]] = []
    pixels = np.arange(4 * 3 * 3, dtype=np.uint8).reshape(3, 4, 3)
    png = encode_image(pixels, "png")
    for i in range(3):
        t = T0 + i * 33 * MS
        out.append(("/camera/top/image", raw_image(t, pixels + i, pad=3), t + MS))
        out.append(("/camera/png/image/compressed", CompressedImage(timestamp=stamp(t), data=png, format="png"), t))
        tfs = FrameTransforms(transforms=[frame_tf(t, "world", "base", i), frame_tf(t, "base", "arm", 2 * i)])
        out.append(("/tf", tfs, t))
        joints = [JointState(name="j1", position=0.1 * i, velocity=1.0), JointState(name="j2", position=0.2 * i)]
        out.append(("/joint_states", JointStates(timestamp=stamp(t), joints=joints), t))
    calibration = CameraCalibration(
        timestamp=stamp(T0),
        frame_id="top_optical",
        width=0,
        height=0,
        distortion_model="plumb_bob",
        K=[50, 0, 2, 0, 50, 1.5, 0, 0, 1],
        D=[0.0] * 5,
    )
    out.append(("/camera/top/calibration", calibration, T0))
    out.append(("/tf_single", frame_tf(T0, "arm", "gripper", 0.3), T0))
    pose = Pose(position=Vector3(x=1, y=2, z=3), orientation=Quaternion(x=0, y=0, z=0, w=1))
    out.append(("/ee/pose", PoseInFrame(timestamp=stamp(T0), frame_id="world", pose=pose), T0))
    out.append(("/targets", PosesInFrame(timestamp=stamp(T0), frame_id="world", poses=[pose, pose]), T0))
    out.append(("/log", Log(timestamp=stamp(T0), level=Log.INFO, message="hello", name="node"), T0))
    tf_json = {
        "timestamp": {"sec": T0 // 10**9, "nsec": 5},
        "parent_frame_id": "world",
        "child_frame_id": "json_child",
        "translation": {"x": 1, "y": 2, "z": 3},
        "rotation": {"x": 0, "y": 0, "z": 0, "w": 1},
    }
    out.append(("/tf_json", ("foxglove.FrameTransform", tf_json), T0))
    jpeg_json = {"timestamp": {"sec": 0, "nsec": 0}, "format": "jpeg", "data": base64.b64encode(jpeg).decode()}
    out.append(("/camera/json/image/compressed", ("foxglove.CompressedImage", jpeg_json), T0))
    return out


@pytest.fixture()
def foxglove_file(tmp_path: Path, bags: Any) -> Path:
    return bags.write_foxglove(tmp_path / "fox.mcap", foxglove_records(bags.WRIST_JPEG[1]))


def test_foxglove_protobuf_and_json(foxglove_file: Path, bags: Any) -> None:
    ep = bags.open_one(foxglove_file)
    assert ep.meta.source_format == "mcap" and ep.skipped == [] and ep.complete
    assert ep.warnings == ["joints/velocity: 3 of 3 samples hold NaN or inf values"]
    s = ep.streams
    top = s["top/rgb"]
    assert isinstance(top, ImageStream) and top.origin is not None and top.origin.time_source == "header"
    pixels = np.arange(36, dtype=np.uint8).reshape(3, 4, 3)
    assert [np.array_equal(f.array(), pixels + i) for i, f in enumerate(top.frames())] == [True] * 3
    assert top.camera is not None and top.camera.k[0, 0] == 50 and (top.camera.width, top.camera.height) == (4, 3)
    png = s["png/rgb"]
    assert isinstance(png, ImageStream) and png.format == "png" and png.frame(0).format == "png"
    assert np.array_equal(png.frame(1).array(), pixels)
    json_img = s["json/rgb"]
    assert isinstance(json_img, ImageStream) and json_img.frame(0).data == bags.WRIST_JPEG[1]
    assert json_img.origin is not None and json_img.origin.time_source == "log"  # zero stamp
    base, arm, gripper = s["tf/base"], s["tf/arm"], s["tf/gripper"]
    assert isinstance(base, PoseStream) and base.translation[:, 0].tolist() == [0, 1, 2]
    assert isinstance(arm, PoseStream) and arm.parent_frame == "base"
    assert isinstance(gripper, PoseStream) and gripper.parent_frame == "arm"
    from_json = s["tf/json_child"]
    assert isinstance(from_json, PoseStream) and from_json.timestamps.tolist() == [T0 // 10**9 * 10**9 + 5]
    assert from_json.translation.tolist() == [[1, 2, 3]]
    position, velocity = s["joints/position"], s["joints/velocity"]
    assert isinstance(position, NumericStream) and position.names == ("j1", "j2")
    np.testing.assert_allclose(position.values, [[0, 0], [0.1, 0.2], [0.2, 0.4]])
    assert np.isnan(velocity.values[:, 1]).all() and "joints/effort" not in s
    assert s["ee/pose"].translation.tolist() == [[1, 2, 3]]
    assert {"targets/pose_0", "targets/pose_1"} <= set(s)
    log = s["log/events"]
    assert isinstance(log, EventStream) and log.values == ("hello",)


def test_unfinished_mcap_is_scanned_linearly(tmp_path: Path, bags: Any) -> None:
    pixels = [np.full((16, 16, 3), i, np.uint8) for i in range(20)]
    records = [("/camera/top/image", raw_image(T0 + i * MS, p), T0 + i * MS) for i, p in enumerate(pixels)]
    full = bags.write_foxglove(tmp_path / "full.mcap", records, chunk_size=1000)
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    ep = bags.open_one(cut)
    assert any("linear scan" in w for w in ep.warnings) and any("ends early" in w for w in ep.warnings)
    top = ep["top/rgb"]
    assert isinstance(top, ImageStream) and 3 <= len(top) < 20
    assert all(np.array_equal(f.array(), pixels[i]) for i, f in enumerate(top.frames()))
    assert all(np.array_equal(f.array(), pixels[i]) for i, f in zip([2, 0], top.frames([2, 0]), strict=True))
    never_finished = bags.write_foxglove(tmp_path / "open.mcap", records, chunk_size=1000, finish=False)
    assert 3 <= len(bags.open_one(never_finished)["top/rgb"]) < 20


def test_bad_channels_are_skipped_and_counted(tmp_path: Path, bags: Any) -> None:
    store = get_typestore(Stores.LATEST)
    string_def = store.generate_msgdef("std_msgs/msg/String", ros_version=2)[0].encode()
    path = tmp_path / "bad.mcap"
    with path.open("wb") as f:
        w = Writer(f)
        w.start(profile="ros2", library="tests")
        good = w.register_schema("std_msgs/msg/String", "ros2msg", string_def)
        bad = w.register_schema("sensor_msgs/msg/JointState", "ros2msg", b"this ] is not --- a msg")
        garbage = w.register_schema("foxglove.RawImage", "protobuf", b"not a descriptor set")
        notes = w.register_channel("/notes", "cdr", good)
        joints = w.register_channel("/joint_states", "cdr", bad)
        raw = w.register_channel("/camera/x/image", "protobuf", garbage)
        cbor = w.register_channel("/task", "cbor", good)
        for i in range(3):
            data = store.serialize_cdr(store.types["std_msgs/msg/String"](data=f"n{i}"), "std_msgs/msg/String")
            w.add_message(notes, log_time=T0 + i, data=bytes(data), publish_time=T0 + i)
            w.add_message(joints, log_time=T0 + i, data=b"\x00" * 8, publish_time=T0 + i)
            w.add_message(raw, log_time=T0 + i, data=b"x", publish_time=T0 + i)
        w.add_message(notes, log_time=T0 + 9, data=b"\x00\x01\x00\x00\xff\xff\xff\x7f", publish_time=T0 + 9)
        w.add_message(cbor, log_time=T0, data=b"\xa0", publish_time=T0)
        w.finish()
    ep = bags.open_one(path)
    notes_stream = ep["notes/events"]
    assert isinstance(notes_stream, EventStream) and notes_stream.values == ("n0", "n1", "n2")
    skipped = {s.topic: s for s in ep.skipped}
    assert set(skipped) == {"/notes", "/joint_states", "/camera/x/image", "/task"}
    assert skipped["/notes"].count == 1 and "1 of 4 messages failed to decode" in skipped["/notes"].reason
    assert skipped["/joint_states"].count == 3 and skipped["/joint_states"].reason.startswith("cannot decode")
    assert skipped["/camera/x/image"].count == 3 and "cbor" in skipped["/task"].reason
    assert sum("skipped /joint_states (sensor_msgs/msg/JointState)" in w for w in ep.warnings) == 1


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"\x89MCAP0\r\n\x01garbage", "not a readable MCAP file"),
        (b"\x89MCAP0\r\n", "not a readable MCAP file"),
        (bytes(range(256)) * 4, "not a recording robokit can read"),
        (b"topic: /tf\n", "not a recording robokit can read"),
        (b"", "not a recording robokit can read"),
    ],
)
def test_not_a_recording(tmp_path: Path, content: bytes, match: str) -> None:
    path = tmp_path / "thing.mcap"
    path.write_bytes(content)
    with pytest.raises(SourceError, match=match) as err:
        robokit.open(path)
    assert str(path) in str(err.value)


def test_bag_directory_problems(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    bag = bags.write_ros2(tmp_path / "run", bags.scenario(ros2_msgs)[:3], ros2_msgs.ts, "mcap")
    meta = yaml.safe_load((bag / "metadata.yaml").read_text())
    info = meta["rosbag2_bagfile_information"]
    info["compression_mode"], info["compression_format"] = "FILE", "zstd"
    (bag / "metadata.yaml").write_text(yaml.safe_dump(meta))
    with pytest.raises(SourceError, match="file-compressed"):
        robokit.open(bag)
    next(bag.glob("*.mcap")).unlink()
    with pytest.raises(SourceError, match="missing"):
        robokit.open(bag)
    (bag / "metadata.yaml").write_text(": not yaml : [")
    with pytest.raises(SourceError, match=r"metadata\.yaml"):
        robokit.open(bag)
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match="not a recording"):
        robokit.open(tmp_path / "empty")
    with pytest.raises(SourceError, match="no such file"):
        robokit.open(tmp_path / "absent.mcap")


def test_summary_is_parsed_once_for_every_rescan_until_the_file_changes(sample_bag: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every segment and format re-reads a camera; the summary (a second for an hour of recording) is kept."""
    import shutil

    from robokit.converters.mcap import reader

    bag = tmp_path / "bag"
    shutil.copytree(sample_bag, bag)
    parsed: list[int] = []
    real = reader.indexed_reader
    monkeypatch.setattr(reader, "indexed_reader", lambda f, verify=True: parsed.append(1) or real(f, verify))
    (episode,) = robokit.open(bag)
    stream = episode.streams["front/rgb"]
    assert isinstance(stream, ImageStream)
    before = len(parsed)
    first = [stream.frame(i).array() for i in (5, 0, 9, 2)]  # steps back rescan from the seek point
    assert len(parsed) == before + 1
    (mcap,) = bag.glob("*.mcap")
    data = mcap.read_bytes()
    mcap.write_bytes(data)  # same bytes, a new ctime: parsed again, never served from a stale entry
    again = [stream.frame(i).array() for i in (5, 0, 9, 2)]
    assert all(np.array_equal(a, b) for a, b in zip(again, first, strict=True))
    assert len(parsed) == before + 2
