from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import trimesh
import yaml
from scipy.spatial.transform import Rotation, Slerp

import robokit
from robokit.converters.options import WriterOptions
from robokit.converters.scene import load_scene
from robokit.converters.scene.sample import TABLE_HEIGHT
from robokit.errors import SourceError
from robokit.sources.sniff import is_scene_file
from robokit.timeline import PoseStream


def _scene(tmp_path: Path, scene_file: Path, **changes: object) -> Path:
    """A copy of the sample description beside the sample's files, with top-level keys changed."""
    data = yaml.safe_load(scene_file.read_text())
    data.update(changes)
    path = scene_file.parent / f"{tmp_path.name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_sample_scene_loads(scene_file: Path) -> None:
    scene = load_scene([scene_file], [], WriterOptions())
    assert [o.name for o in scene.objects] == ["table", "bin", "cube"]
    assert scene.objects[2].dynamic and scene.objects[2].mass == 0.1
    assert scene.objects[1].pose.translation == pytest.approx([0, 0, TABLE_HEIGHT])
    assert len(scene.splats) == 1 and scene.splats[0].sh_degree == 1 and len(scene.splats[0]) > 10000
    assert scene.meta.convention == "rayform" and scene.ground is not None and scene.skipped == []
    assert [c.name for c in scene.cameras] == ["overview"] and [li.name for li in scene.lights] == ["sun"]


def test_look_at_camera_points_at_its_target(scene_file: Path) -> None:
    (camera,) = load_scene([scene_file], [], WriterOptions()).cameras
    rotation = Rotation.from_quat(camera.poses.quaternion[0]).as_matrix()
    forward, down = rotation[:, 2], rotation[:, 1]  # rayform cameras: OpenCV axes
    target = np.array([0, 0, TABLE_HEIGHT]) - camera.poses.translation[0]
    assert forward == pytest.approx(target / np.linalg.norm(target))
    assert down[2] < 0  # upright: image down points to the floor


def test_bad_objects_are_left_out_with_their_name(tmp_path: Path, scene_file: Path) -> None:
    data = yaml.safe_load(scene_file.read_text())
    objects = [*data["objects"],
               {"name": "ghost", "mesh": "meshes/missing.obj"},
               {"name": "nan_pose", "mesh": "meshes/cube.stl", "pose": {"position": [float("nan"), 0, 0]}},
               {"name": "typo", "mesh": "meshes/cube.stl", "dynamc": True}]
    scene = load_scene([_scene(tmp_path, scene_file, objects=objects)], [], WriterOptions())
    assert [o.name for o in scene.objects] == ["table", "bin", "cube"]
    reasons = dict(scene.skipped)
    assert "missing.obj does not exist" in reasons["ghost"]
    assert "'nan_pose': non-finite pose" in reasons["nan_pose"]
    assert "unknown key(s) dynamc" in reasons["typo"]


def test_bad_splat_is_left_out_and_the_rest_loads(tmp_path: Path, scene_file: Path) -> None:
    bad = scene_file.parent / "bad_splat.ply"
    bad.write_bytes(b"ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
                    b"property float z\nproperty float opacity\nend_header\n" + bytes(16))
    path = _scene(tmp_path, scene_file, splats=[{"name": "room", "path": "bad_splat.ply"}])
    scene = load_scene([path], [], WriterOptions())
    assert scene.splats == [] and len(scene.objects) == 3
    assert "missing properties f_dc_0" in dict(scene.skipped)["room"]


def test_units_scale_everything(tmp_path: Path, scene_file: Path) -> None:
    metres = load_scene([scene_file], [], WriterOptions())
    cm = load_scene([_scene(tmp_path, scene_file, units="cm")], [], WriterOptions())
    assert cm.objects[1].pose.translation == pytest.approx(metres.objects[1].pose.translation / 100)
    assert cm.objects[0].visual.extents == pytest.approx(metres.objects[0].visual.extents / 100)
    assert cm.splats[0].scales == pytest.approx(metres.splats[0].scales / 100, rel=1e-5)


def test_bare_files_and_sniffing(tmp_path: Path, scene_file: Path) -> None:
    root = scene_file.parent
    mesh = tmp_path / "crate.glb"
    trimesh.creation.box((0.4, 0.3, 0.3)).export(mesh)
    scene = load_scene([root / "splat.ply", mesh, root / "meshes" / "bin.ply"], [],
                       WriterOptions(extra={"scene_frame": "ros"}))
    assert [s.name for s in scene.splats] == ["splat"] and [o.name for o in scene.objects] == ["crate", "bin"]
    assert scene.meta.convention == "ros"
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text("/joint_states: joints\n")
    assert is_scene_file(scene_file) and is_scene_file(root / "splat.ply") and is_scene_file(mesh)
    assert not is_scene_file(mapping) and not is_scene_file(root) and not is_scene_file(tmp_path / "nope.ply")


def test_nothing_loadable_and_missing_paths_are_errors(tmp_path: Path) -> None:
    broken = tmp_path / "broken.obj"
    broken.write_text("this is not an obj\n")
    with pytest.raises(SourceError, match=r"nothing to put in the scene: .*broken"):
        load_scene([broken], [], WriterOptions())
    with pytest.raises(SourceError, match=r"not found: .*nope\.ply"):
        load_scene([tmp_path / "nope.ply"], [], WriterOptions())


def test_camera_trajectories_from_a_recording(scene_file: Path, sample_bag: Path) -> None:
    (episode,) = robokit.open(sample_bag)
    scene = load_scene([scene_file], [episode], WriterOptions())
    cams = {c.name: c for c in scene.cameras}
    assert set(cams) == {"overview", "front", "wrist"} and scene.episodes == 1
    assert not cams["front"].animated and cams["wrist"].animated
    assert len(cams["wrist"].poses) == len(episode.streams["wrist/rgb"])
    assert cams["wrist"].intrinsics.width == episode.streams["wrist/rgb"].width
    # the wrist pose is tool0 (interpolated at the frame time) composed with the static optical offset
    tool, offset = episode.streams["tf/tool0"], episode.streams["tf/wrist_camera_optical"]
    assert isinstance(tool, PoseStream) and isinstance(offset, PoseStream)
    wrist = cams["wrist"].poses
    times = (tool.timestamps - tool.timestamps[0]) / 1e9
    at = (wrist.timestamps - tool.timestamps[0]) / 1e9
    rotation = Slerp(times, Rotation.from_quat(tool.quaternion))(at)
    translation = np.stack([np.interp(at, times, tool.translation[:, i]) for i in range(3)], axis=1)
    world_from_tool = np.tile(np.eye(4), (len(at), 1, 1))
    world_from_tool[:, :3, :3], world_from_tool[:, :3, 3] = rotation.as_matrix(), translation
    assert wrist.matrices() == pytest.approx(world_from_tool @ offset.matrices()[0], abs=1e-9)
    only_front = load_scene([scene_file], [episode], WriterOptions(cameras=("front",)))
    assert [c.name for c in only_front.cameras] == ["overview", "front"]
    front = cams["front"].poses
    assert front.matrices()[0] == pytest.approx(episode.streams["tf/front_camera_optical"].matrices()[0])


def test_json_description_lights_and_no_ground(tmp_path: Path, scene_file: Path) -> None:
    data = yaml.safe_load(scene_file.read_text())
    data.update(ground=False, lights=[{"name": "bulb", "type": "point", "position": [0, 0, 2], "intensity": 2.0},
                                      {"name": "bad", "type": "laser"}])
    path = scene_file.parent / f"{tmp_path.name}.json"
    path.write_text(json.dumps(data))
    assert is_scene_file(path)
    scene = load_scene([path], [], WriterOptions())
    assert scene.ground is None and [li.name for li in scene.lights] == ["bulb"]
    assert scene.lights[0].kind == "point" and "type 'laser'" in dict(scene.skipped)["bad"]
    path.write_text(json.dumps({**data, "colour": "red"}))
    with pytest.raises(SourceError, match="unknown key\\(s\\) colour"):
        load_scene([path], [], WriterOptions())


@pytest.mark.parametrize("ground", [{"height": None}, {"height": "low"}, {"size": 0}, {"height": float("nan")},
                                    {"size": True}])
def test_a_ground_that_is_not_numbers_is_refused_by_name(tmp_path: Path, scene_file: Path, ground: dict) -> None:
    """Found by the fuzz harness: `ground: {height: null}` raised a TypeError traceback."""
    data = yaml.safe_load(scene_file.read_text())
    path = scene_file.parent / f"{tmp_path.name}.yaml"
    path.write_text(yaml.safe_dump({**data, "ground": ground}))
    with pytest.raises(SourceError, match="ground must be"):
        load_scene([path], [], WriterOptions())
    path.write_text(yaml.safe_dump({**data, "ground": {"height": 0.5, "size": 4}}))
    scene = load_scene([path], [], WriterOptions())
    assert scene.ground is not None and (scene.ground.height, scene.ground.size) == (0.5, 4.0)


@pytest.mark.parametrize("color", ["", [1, 0], ["red", 0, 0], [0.5, None, 0]])
def test_an_entry_with_a_bad_color_is_skipped_with_its_reason(tmp_path: Path, scene_file: Path, color: object) -> None:
    """Found by the fuzz harness: `color: ''` raised an IndexError traceback; now the entry is left out, named."""
    data = yaml.safe_load(scene_file.read_text())
    data["objects"][0]["color"] = color
    data["lights"] = [{"name": "lamp", "color": color}, {"name": "sun", "color": [1, 0.9, 0.8]}]
    path = scene_file.parent / f"{tmp_path.name}.yaml"
    path.write_text(yaml.safe_dump(data))
    scene = load_scene([path], [], WriterOptions())
    skipped = dict(scene.skipped)
    assert "color must be 3 numbers" in skipped[data["objects"][0]["name"]] and "color must be" in skipped["lamp"]
    assert [li.name for li in scene.lights] == ["sun"] and scene.lights[0].color == (1.0, 0.9, 0.8)
