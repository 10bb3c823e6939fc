"""Types without a builder, flattened by their fields (robokit/ros/generic.py): a custom ArmState in every
container (tests/ros/custom.py), through `info` and `convert`, and the flattener's edge cases on JSON messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import robokit
from robokit.cli import main
from robokit.ros.fields import wrap_json
from robokit.ros.generic import MAX_DEPTH, MAX_DIMS, GenericBuilder
from robokit.timeline import EventStream, NumericStream, Stream
from tests.ros import custom


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("custom")
    return {kind: custom.write(kind, root / kind) for kind in custom.CONTAINERS}


@pytest.mark.parametrize("kind", custom.CONTAINERS)
def test_custom_type_in_every_container(recordings: dict[str, Path], kind: str) -> None:
    (ep,) = robokit.open(recordings[kind])
    custom.check_arm(ep)
    assert not ep.complete  # the dq message left out is a loss


def test_info_lists_the_channels(recordings: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", "--json", str(recordings["ros2-sqlite3"])]) == 0
    (info,) = json.loads(capsys.readouterr().out)
    rows = {s["channel"]: (s["kind"], s["topic"], s["msgtype"], s["count"]) for s in info["streams"]}
    assert rows["arm/state/q"] == ("numeric", custom.TOPIC, custom.TYPE, custom.N)
    assert rows["arm/state/dq"][3] == custom.N - 1 and rows["arm/state/label"][:1] == ("event",)
    assert not info["skipped"] and info["losses"]


def test_info_mapping_renames_the_whole_group(recordings: dict[str, Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    mapping = tmp_path / "map.yaml"
    mapping.write_text("/arm/state: robot/left\n")
    assert main(["info", "--json", "--mapping", str(mapping), str(recordings["mcap-json"])]) == 0
    (info,) = json.loads(capsys.readouterr().out)
    assert {s["channel"] for s in info["streams"]} == {"robot/left", "robot/left/q", "robot/left/dq", "robot/left/name",
                                                       "robot/left/label", "robot/left/gripper", "robot/left/waypoints"}


def _convert(out: Path, *args: str) -> dict[str, Any]:
    rc = main(["convert", *args, "--out", str(out), "--no-cache", "--workers", "1", "-q"])
    record: dict[str, Any] = json.loads((out / "export.json").read_text())
    assert rc == 0, record
    return record


def test_convert_to_lerobot_with_the_custom_state(recordings: dict[str, Path], tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    _convert(tmp_path, str(recordings["ros2-sqlite3"]), "--to", "lerobot", "--state", "arm/state/q", "--action",
             "arm/state/gripper", "--fps", "50")
    info = json.loads((tmp_path / "lerobot" / "meta" / "info.json").read_text())
    assert info["features"]["observation.state"]["names"] == custom.NAMES
    table = pq.read_table(next((tmp_path / "lerobot" / "data").rglob("*.parquet"))).to_pydict()
    np.testing.assert_allclose(np.array(table["observation.state"]), custom.expected()["arm/state/q"])


def test_convert_to_mcap_and_back(recordings: dict[str, Path], tmp_path: Path) -> None:
    _convert(tmp_path, str(recordings["ros1"]), "--to", "mcap")
    (back,) = robokit.open(next((tmp_path / "mcap").rglob("*.mcap")))
    want = custom.expected()
    for name in ("arm/state/q", "arm/state/waypoints", "arm/state"):
        stream = back[name]
        assert isinstance(stream, NumericStream)
        np.testing.assert_allclose(stream.values, want[name], err_msg=name)
    assert back["arm/state/label"].values == ("idle", "moving")  # type: ignore[attr-defined]


def test_convert_mapping_option(recordings: dict[str, Path], tmp_path: Path) -> None:
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps({"/arm/state": "robot"}))
    record = _convert(tmp_path / "out", str(recordings["mcap-protobuf"]), "--to", "lerobot", "--state", "robot/q",
                      "--mapping", str(mapping), "--fps", "50")
    assert record["formats"]["lerobot"]["status"] == "written"
    (tmp_path / "map.json").write_text("[1, 2]")
    assert main(["convert", str(recordings["ros1"]), "--to", "mcap", "--out", str(tmp_path / "bad"),
                 "--mapping", str(mapping)]) == 2


def _build(*messages: dict[str, Any], topic: str = "/x") -> tuple[GenericBuilder, dict[str, Stream]]:
    b = GenericBuilder(topic, "acme.X")
    for i, m in enumerate(messages):
        b.add(wrap_json(m), 1_000 + i, i)
    return b, {s.name: s for s in b.build()}


def test_empty_array_decides_its_channel_once_it_holds_values() -> None:
    _, s = _build({"v": [], "t": []}, {"v": [1, 2], "t": []}, {"v": [3, 4], "t": ["a"]})
    v, t = s["x/v"], s["x/t"]
    assert isinstance(v, NumericStream) and v.values.tolist() == [[1, 2], [3, 4]] and v.names == ("v_0", "v_1")
    assert isinstance(t, EventStream) and t.values == ('["a"]',)


def test_json_values_of_another_shape_are_counted() -> None:
    b, s = _build({"a": 1.0, "v": [1, 2], "s": "x"}, {"a": "high", "v": "oops", "s": "y"}, {"v": [5, 6]})
    assert np.isnan(s["x"].values[1, 0]) and np.isnan(s["x"].values[2, 0])  # a string, then no `a` at all
    assert s["x/v"].values.tolist() == [[1, 2], [5, 6]]
    assert [(x.topic, x.messages) for x in b.losses] == [("/x", 1)] and "x/v" in b.losses[0].reason
    assert any("1 message(s) without the field(s) of x" in w for w in b.warnings)


def test_what_is_not_read_is_said() -> None:
    deep: dict[str, Any] = {"v": 0}
    for k in range(MAX_DEPTH + 1):
        deep = {"n": deep, "v": k}
    many = {f"f{i}": i for i in range(MAX_DIMS + 1)}
    b, s = _build({"wide": list(range(MAX_DIMS + 1)), "deep": deep, "odd.name": 1, "nested": [[1, 2]], "ok": 2,
                   "many": many})
    assert set(s) == {"x"} | {"x/deep" + "/n" * k for k in range(MAX_DEPTH - 1)}  # 8 levels with the top one
    notes = " ".join(b.warnings)
    assert f"not read (over {MAX_DIMS} values): x/many, x/wide" in notes
    assert f"not read (nested deeper than {MAX_DEPTH} messages)" in notes
    assert "not read (field name not usable): x/odd.name" in notes and "not numbers or strings): x/nested" in notes


def test_strings_are_events_on_change_only() -> None:
    _, s = _build({"mode": "a"}, {"mode": "a"}, {"mode": ""}, {"mode": "b"}, {"mode": "b"})
    mode = s["x/mode"]
    assert isinstance(mode, EventStream) and mode.values == ("a", "b") and mode.timestamps.tolist() == [1000, 1003]


def test_only_the_top_level_header_is_the_clock() -> None:
    stamped = {"header": {"stamp": {"sec": 1, "nsec": 500_000_000}, "frame_id": "w"}, "x": 2.0}
    b, s = _build(*({"header": {"stamp": {"sec": 10 + i, "nsec": 0}, "frame_id": "base"}, "target": stamped,
                     "poses": [stamped]} for i in range(2)))
    assert set(s) == {"x/target", "x/target/header", "x/target/header/frame_id", "x/poses"}
    assert s["x/target"].timestamps.tolist() == [10 * 10**9, 11 * 10**9]  # the top-level header stamps
    assert s["x/target/header"].values.tolist() == [[1.5], [1.5]] and s["x/target/header/frame_id"].values == ("w",)
    assert s["x/poses"].names == ("header.stamp_0", "x_0") and s["x/poses"].values.tolist() == [[1.5, 2]] * 2
    assert any("(in an array of messages, not a number): x/poses/header/frame_id" in w for w in b.warnings)


def test_custom_type_with_an_idl_schema(tmp_path: Path) -> None:
    """MCAP `ros2idl` schemas are read with rosbags' get_types_from_idl, like the msg ones."""
    from mcap.writer import Writer
    from rosbags.typesys import Stores, get_types_from_idl, get_typestore

    idl = ("module acme_msgs {\n  module msg {\n    struct Status {\n      double q[3];\n"
           "      sequence<float> dq;\n      boolean ok;\n      string label;\n    };\n  };\n};\n")
    store = get_typestore(Stores.EMPTY)
    store.register(get_types_from_idl(idl))
    cls = store.types["acme_msgs/msg/Status"]
    path = tmp_path / "status.mcap"
    with path.open("wb") as f:
        writer = Writer(f)
        writer.start(profile="ros2", library="robokit-tests")
        channel = writer.register_channel("/status", "cdr", writer.register_schema("acme_msgs/msg/Status", "ros2idl",
                                                                                   idl.encode()))
        for i in range(3):
            msg = cls(q=np.array([i, 2.0, 3.0]), dq=np.array([0.5] * 2, dtype=np.float32), ok=i > 0, label="s")
            writer.add_message(channel, log_time=10**18 + i, data=bytes(store.serialize_cdr(msg, cls.__msgtype__)),
                               publish_time=10**18 + i)
        writer.finish()
    (ep,) = robokit.open(path)
    assert ep["status/q"].values.tolist() == [[0, 2, 3], [1, 2, 3], [2, 2, 3]]  # type: ignore[attr-defined]
    assert ep["status"].names == ("ok",) and ep["status/dq"].values.shape == (3, 2)  # type: ignore[attr-defined]
    assert ep["status/label"].values == ("s",)  # type: ignore[attr-defined]


def test_custom_type_without_its_definition_is_skipped_not_lost(tmp_path: Path) -> None:
    import sqlite3

    bag = custom.write("ros2-sqlite3", tmp_path)
    (db3,) = bag.glob("*.db3")
    with sqlite3.connect(db3) as db:
        db.execute("DELETE FROM message_definitions")
    (ep,) = robokit.open(bag)
    (skipped,) = ep.skipped
    assert (skipped.topic, skipped.count) == (custom.TOPIC, custom.N) and "no definition" in skipped.reason
    assert not ep.streams and ep.complete  # nothing the recording describes was lost
