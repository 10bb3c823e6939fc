"""Topic → channel naming rules and the user's topic → channel mapping."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from robokit.errors import OptionError, SourceError
from robokit.sources import naming


@pytest.mark.parametrize(
    ("topic", "depth", "channel"),
    [
        ("/camera/front/image_raw", False, "front/rgb"),
        ("/camera/wrist/image_raw/compressed", False, "wrist/rgb"),
        ("/camera/front/image_rect_color", False, "front/rgb"),
        ("/front_cam/color/image_raw", False, "front_cam/rgb"),
        ("/camera/front/depth/image_raw", False, "front/depth"),
        ("/camera/wrist/image_raw", True, "wrist/depth"),
        ("/camera/image_raw", False, "camera/rgb"),
        ("/image", True, "camera/depth"),
    ],
)
def test_image_channels(topic: str, depth: bool, channel: str) -> None:
    assert naming.image_channel(topic, depth) == channel


def test_camera_info_names_the_same_camera() -> None:
    assert naming.camera_name("/camera/front/camera_info") == naming.camera_name("/camera/front/image_raw") == "front"
    assert naming.camera_name("/camera/top/calibration") == "top"


@pytest.mark.parametrize(
    ("topic", "group"),
    [("/joint_states", "joints"), ("/left/joint_states", "left_joints"), ("/joint_commands", "joint_commands")],
)
def test_joint_groups(topic: str, group: str) -> None:
    assert naming.joints_group(topic) == group


def test_names_events_and_frames() -> None:
    assert naming.event_channel("/task") == naming.event_channel("/robot/language_instruction") == "task"
    assert naming.event_channel("/notes") == "notes/events" and naming.event_channel("foo") == "foo/events"
    assert naming.topic_name("/turtle1/cmd_vel") == "turtle1_cmd_vel"
    assert naming.topic_name("/gripper/pose", frozenset({"pose"}), "pose") == "gripper"
    assert naming.topic_name("/pose", frozenset({"pose"}), "pose") == "pose"
    assert naming.frame_name("//world") == "world"


def test_apply_mapping() -> None:
    assert naming.apply_mapping("top/rgb", ["front/rgb"], multi=False) == ["top/rgb"]
    assert naming.apply_mapping("top", ["front/rgb"], multi=False) == ["top/rgb"]
    assert naming.apply_mapping("arm", ["joints/position", "joints/velocity"], multi=True) == [
        "arm/position",
        "arm/velocity",
    ]
    assert naming.apply_mapping("frames/x", ["tf/base"], multi=True) == ["frames/x/base"]  # the whole value
    generic = ["arm/state", "arm/state/q", "arm/state/target"]  # a flattened type: the topic path is the group
    assert naming.apply_mapping("robot", generic, multi=True, group="arm/state") == ["robot", "robot/q", "robot/target"]
    assert naming.apply_mapping("a/b", ["arm/state/q"], multi=True, group="arm/state") == ["a/b/q"]
    assert naming.lookup({"/foo": "bar/events"}, "foo") == "bar/events"


def test_load_mapping_sources(tmp_path: Path) -> None:
    assert naming.load_mapping(None) == {}
    assert naming.load_mapping({"/a": "/x/y/"}) == {"/a": "x/y"}
    yml = tmp_path / "map.yaml"
    yml.write_text("/camera/front/image_raw: top/rgb\n/joint_states: arm\n")
    assert naming.load_mapping(yml) == {"/camera/front/image_raw": "top/rgb", "/joint_states": "arm"}
    js = tmp_path / "map.json"
    js.write_text(json.dumps({"/tf": "frames"}))
    assert naming.load_mapping(str(js)) == {"/tf": "frames"}
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert naming.load_mapping(empty) == {}


@pytest.mark.parametrize(
    ("text", "suffix"), [("[1, 2]", ".yaml"), ("{bad json", ".json"), ("/a: [1]", ".yaml"), ("/a: ''", ".yml")]
)
def test_load_mapping_bad_content(tmp_path: Path, text: str, suffix: str) -> None:
    path = tmp_path / f"map{suffix}"
    path.write_text(text)
    with pytest.raises(OptionError, match=str(path.name)):
        naming.load_mapping(path)


def test_load_mapping_bounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(OptionError, match="control characters"):
        naming.load_mapping({"/a": "x\ny"})
    with pytest.raises(OptionError, match="at most 4096"):
        naming.load_mapping({"/a": "x" * 5000})
    monkeypatch.setattr(naming, "MAX_MAPPING_ENTRIES", 2)
    with pytest.raises(OptionError, match="3 topic mapping entries; at most 2"):
        naming.load_mapping({"/a": "a", "/b": "b", "/c": "c"})
    monkeypatch.setattr(naming, "MAX_MAPPING_BYTES", 10)
    big = tmp_path / "big.yaml"
    big.write_text("/a: aaaaaaaaaaaaaaa\n")
    with pytest.raises(OptionError, match="at most 10 allowed"):
        naming.load_mapping(big)


def test_load_mapping_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="cannot read the topic mapping"):
        naming.load_mapping(tmp_path / "absent.yaml")


def test_mapping_renames_channels(tmp_path: Path, bags: Any, ros2_msgs: Any) -> None:
    bag = bags.write_ros2(tmp_path / "run", bags.scenario(ros2_msgs), ros2_msgs.ts, "mcap")
    mapping = tmp_path / "map.yaml"
    mapping.write_text(
        "/camera/front/image_raw: top/rgb\n/camera/side/image_raw: top/rgb\n/joint_states: arm\n"
        "/cmd_vel: base_cmd\n/tf: frames\nnotes: log/events\n/kv: diag/kv\n"
    )
    ep = bags.open_one(bag, mapping)
    s = ep.streams
    assert {"top/rgb", "top/rgb_2", "arm/position", "arm/velocity", "base_cmd/twist", "frames/base"} <= set(s)
    assert {"diag/kv/key", "diag/kv/value"} <= set(s)  # a type flattened by its fields: the whole group renamed
    assert {"front/rgb", "joints/position", "cmd_vel/twist", "tf/base"}.isdisjoint(s) and "log/events" in s
    assert s["top/rgb"].origin is not None and s["top/rgb"].origin.topic == "/camera/front/image_raw"
    assert any("already taken" in w for w in ep.warnings)
    assert s["top/rgb"].camera is not None  # intrinsics follow the topic, not the renamed channel
