"""The TF tree: one parent per frame, one root, no cycles; bad pose streams renamed or cleaned, never dropped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import robokit
from robokit.converters import get_converter
from robokit.converters.mcap.tftree import build_tree
from robokit.timeline import PoseStream

from .conftest import T0, camera, episode, messages, pose, summary, write


def _log(path: Path) -> list[str]:
    return [getattr(m, "message", None) or m.msg for _, m in messages(path, "/robokit/log")]


def _edges(path: Path, topic: str = "/tf") -> set[tuple[str, str]]:
    out = set()
    for _, msg in messages(path, topic):
        for tf in msg.transforms:
            parent = getattr(tf, "parent_frame_id", None) or tf.header.frame_id
            out.add((parent, tf.child_frame_id))
    return out


@pytest.mark.parametrize("encoding", ["protobuf", "ros2"])
def test_second_parent_renamed_and_read_back(tmp_path: Path, encoding: str) -> None:
    streams = [pose("tf/a", "world", "a"), pose("tf/b", "a", "b"), pose("x/pose", "world", "b", n=4)]
    result = get_converter("mcap").write([episode(streams)], tmp_path,
                                         robokit.converters.options.WriterOptions(extra={"mcap_encoding": encoding}))
    path = tmp_path / "mcap" / "ep.mcap"
    assert _edges(path) == {("world", "a"), ("a", "b"), ("world", "b__x_pose")}
    assert any("x/pose" in w and "already has parent 'a'" in w for w in result.warnings)
    assert any("written as child frame 'b__x_pose'" in line for line in _log(path))
    assert get_converter("mcap").check(tmp_path / "mcap") == []
    back = robokit.open(path)[0]
    assert {n: len(s) for n, s in back.poses.items()} == {"tf/a": 5, "tf/b": 5, "x/pose": 4}


def test_cycle_renamed(tmp_path: Path) -> None:
    streams = [pose("tf/a", "world", "a"), pose("tf/b", "a", "b"), pose("loop/pose", "b", "world")]
    out = write([episode(streams)], tmp_path)
    assert ("b", "world__loop_pose") in _edges(out / "ep.mcap")
    assert any("would close a cycle" in line for line in _log(out / "ep.mcap"))
    assert get_converter("mcap").check(out) == []


def test_self_loop_and_empty_parent() -> None:
    tree = build_tree({"tf/a": pose("tf/a", "world", "a"), "s/pose": pose("s/pose", "a", "a"),
                       "imu/orientation": pose("imu/orientation", "", "imu")}, [], "rayform", T0)
    assert {(e.parent, e.child) for e in tree.edges} == {("world", "a"), ("a", "a__s_pose"), ("world", "imu")}
    assert tree.root == "world" and not tree.fills


def test_nan_poses_skipped_and_counted(tmp_path: Path) -> None:
    p = pose("tf/a", "world", "a")
    t = p.translation.copy()
    t[[1, 3]] = np.nan
    p = PoseStream("tf/a", p.timestamps, t, p.quaternion, parent_frame="world", child_frame="a")
    out = write([episode([p])], tmp_path)
    assert any("tf/a: skipped 2 of 5 poses with NaN values" in line for line in _log(out / "ep.mcap"))
    stamps = [t for t, _ in messages(out / "ep.mcap", "/tf")]
    assert stamps == p.timestamps[[0, 2, 4]].tolist()
    assert len(robokit.open(out / "ep.mcap")[0]["tf/a"]) == 3
    assert get_converter("mcap").check(out) == []


def test_extra_roots_and_unplaced_cameras_linked(tmp_path: Path) -> None:
    streams = [pose("tf/a", "world", "a"), pose("tf/c", "map", "c"), camera("top/rgb", "top_optical", calibrated=False)]
    out = write([episode(streams)], tmp_path)
    path = out / "ep.mcap"
    assert _edges(path, "/robokit/tf_static") == {("world", "map"), ("world", "top_optical")}
    log = _log(path)
    assert any("'map' is not connected" in line for line in log) and any("no extrinsics" in line for line in log)
    assert any("no intrinsics" in line for line in log)
    assert get_converter("mcap").check(out) == []
    back = robokit.open(path)[0]  # the identity links and the nominal calibration are not read as recorded data
    assert sorted(back.poses) == ["tf/a", "tf/c"]
    assert back.cameras["top/rgb"].camera is None


def test_root_edges_take_the_world_convention(tmp_path: Path) -> None:
    streams = [pose("tf/a", "world", "a", n=2), pose("tf/b", "a", "b", n=2)]
    out = write([episode(streams)], tmp_path, frame="opencv")
    (_, first), *_ = messages(out / "ep.mcap", "/tf")
    by_child = {tf.child_frame_id: tf for tf in first.transforms}
    a, b = by_child["a"].translation, by_child["b"].translation
    assert (a.x, a.y, a.z) == pytest.approx((0.0, -0.5, 0.0))  # FLU (0, 0, 0.5) in RDF: down is −up
    assert (b.x, b.y, b.z) == pytest.approx((0.0, 0.0, 0.5))  # between robot frames: unchanged


def test_non_optical_camera_axes_reported(tmp_path: Path) -> None:
    out = write([episode([pose("tf/c_optical", "world", "c_optical"), camera("c/rgb", "c_optical")])], tmp_path,
                frame="opengl")
    assert any("opengl camera axes" in line for line in _log(out / "ep.mcap"))


def test_camera_edges_take_the_camera_axes() -> None:
    cam = pose("tf/cam_optical", "world", "cam_optical", n=1)
    tree = build_tree({"tf/cam_optical": cam}, ["cam_optical"], "isaac", T0)  # FLU world, USD camera (RUB)
    (edge,) = tree.edges
    axes = Rotation.from_quat(edge.quaternion[0]).as_matrix()
    assert np.allclose(axes, np.diag([1.0, -1.0, -1.0]))  # x kept, y and z flipped: optical → RUB


def test_summary_has_tf_static_once(tmp_path: Path) -> None:
    out = write([episode([pose("tf/a", "world", "a"), pose("tf/s", "a", "s", n=1, static=True)])], tmp_path)
    s = summary(out / "ep.mcap")
    counts = {s.channels[c].topic: n for c, n in s.statistics.channel_message_counts.items()}
    assert counts["/tf_static"] == 1 and counts["/tf"] == 5
