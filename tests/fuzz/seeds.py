"""Fuzz seeds: small valid inputs of every reader kind, made by robokit's own generators and writers,
plus tiny copies of the public fixtures in /work/shared/fixtures when they are present."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures"
RECORDING_FORMATS = ("webdataset",)  # the episode format every recording is converted to (cheap to write)
REALDATA = Path(__file__).resolve().parents[1] / "realdata" / "ros"
REAL_CAMERAS = ("librealsense_depth_color.bag", "fiducials_aruco_marker.bag", "ait_images")  # committed copies
FIXTURE_FORMATS = ("mcap",)  # the public bags (and custom types) hold neither cameras nor joints: MCAP takes all
SCENE_FORMATS = ("usd",)
SCENE_ARGS = ("--collision", "convex-hull")  # CoACD's decomposition takes seconds per mesh: too slow per case


@dataclass(frozen=True)
class Seed:
    """One valid input: `kind` names the reader, `path` is what is given to robokit, relative to `root`
    (the folder that is copied for every case); `manifest` seeds are given with --manifest."""

    kind: str
    root: Path
    path: str
    formats: tuple[str, ...] = RECORDING_FORMATS
    manifest: bool = False
    scene: bool = False

    @property
    def args(self) -> tuple[str, ...]:
        """Extra `robokit convert` arguments (a fixed rate, except for the fixtures' event-only bags)."""
        return SCENE_ARGS if self.scene else () if self.formats == FIXTURE_FORMATS else ("--fps", "10")

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.root.name}"


def _export(source: Path, fmt: str, out: Path) -> Path:
    from robokit.export.job import export

    export([source], formats=[fmt], dest=out, use_cache=False, options={"fps": 10})
    return out / fmt


def _sample_bag(out: Path) -> Path:
    from robokit.samples import SampleSpec, write_sample_bag

    return write_sample_bag(out, SampleSpec(duration_s=0.6, width=32, height=24, joint_hz=30.0, front_hz=10.0,
                                            wrist_hz=5.0))


def _copy(src: Path, dest: Path) -> Path:
    if src.is_dir():
        shutil.copytree(src, dest)
    else:
        dest.mkdir(parents=True)
        shutil.copy2(src, dest / src.name)
    return dest


def _point_cloud_ply(path: Path) -> None:
    """A binary PLY with vertices and colours only: neither faces nor 3DGS properties."""
    import numpy as np

    xyz = np.random.default_rng(0).normal(size=(50, 3)).astype("<f4")
    header = ("ply\nformat binary_little_endian 1.0\nelement vertex 50\nproperty float x\nproperty float y\n"
              "property float z\nend_header\n")
    path.write_bytes(header.encode() + xyz.tobytes())


def _relative_image_paths(jsonl: Path) -> None:
    """Viam binary lines with image paths from their `data/` folder on (the writer's are absolute, under
    the folder it wrote to), so the copied export stays readable."""
    lines = [json.loads(line) for line in jsonl.read_text().splitlines() if line.strip()]
    for line in lines:
        line["image_path"] = line["image_path"][line["image_path"].rindex("/data/") + 1:]
    jsonl.write_text("".join(json.dumps(line) + "\n" for line in lines))


def build_seeds(base: Path, with_fixtures: bool = True) -> list[Seed]:
    """Write every seed under `base` (a new or complete folder: reused when already built)."""
    base = base.resolve()
    done = base / "seeds.json"
    if done.is_file():
        return [Seed(s["kind"], Path(s["root"]), s["path"], tuple(s["formats"]), s["manifest"], s["scene"])
                for s in json.loads(done.read_text())]
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    seeds: list[Seed] = []
    bag = _sample_bag(base / "ros2-mcap" / "episode")
    seeds.append(Seed("ros2-mcap", base / "ros2-mcap", "episode"))
    from robokit.samples.pointbag import write_point_bag  # point clouds and laser scans: their decoders

    write_point_bag(base / "ros2-points" / "episode")
    seeds.append(Seed("ros2-points", base / "ros2-points", "episode"))
    mcap_file = next(bag.glob("*.mcap"))
    (base / "mcap").mkdir()
    shutil.copy2(mcap_file, base / "mcap" / "recording.mcap")
    seeds.append(Seed("mcap", base / "mcap", "recording.mcap"))
    exports = base / "_exports"
    for kind, fmt in (("lerobot", "lerobot"), ("rlds", "rlds"), ("viam-binary", "viam-binary"),
                      ("viam-sequence", "viam-sequence")):
        out = _export(bag, fmt, exports / fmt)
        _copy(out, base / kind / "dataset")
        if kind == "viam-binary":
            _relative_image_paths(base / kind / "dataset" / "dataset.jsonl")
        # images alone (no state) convert to the Viam layout, not to the step formats
        formats = ("viam-binary",) if kind == "viam-binary" else RECORDING_FORMATS
        seeds.append(Seed(kind, base / kind, "dataset", formats))
    from tests.ros import custom

    for kind in ("ros2-sqlite3", "mcap-json"):  # a type without a builder, flattened by its fields
        recording = custom.write(kind, base / f"custom-{kind}")
        seeds.append(Seed(f"custom-{kind}", recording.parent, recording.name, FIXTURE_FORMATS))
    from robokit.samples.videobag import write_video_bag

    write_video_bag(base / "ros2-video" / "episode", frames=20, width=64, height=48, gop=8)
    seeds.append(Seed("ros2-video", base / "ros2-video", "episode", FIXTURE_FORMATS))  # coded video: MCAP copies it
    (base / "manifest" / "rec").parent.mkdir()
    shutil.copytree(bag, base / "manifest" / "rec")
    lines = [{"data_path": "rec", "episode_id": "first", "task": "pick", "tags": {"site": "lab"},
              "segment": {"start": 0, "end": 2**62}}]
    (base / "manifest" / "manifest.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    seeds.append(Seed("manifest", base / "manifest", "manifest.jsonl", manifest=True))

    from robokit.converters.scene.sample import write_sample_scene

    scene_yaml = write_sample_scene(base / "scene" / "scene", density=300.0)
    seeds.append(Seed("scene-yaml", base / "scene", "scene/scene.yaml", SCENE_FORMATS, scene=True))
    for kind, rel in (("ply-splat", "splat.ply"), ("ply-mesh", "meshes/bin.ply"), ("mesh-obj", "meshes/table.obj"),
                      ("mesh-stl", "meshes/cube.stl")):
        src = scene_yaml.parent / rel
        _copy(src, base / kind)
        seeds.append(Seed(kind, base / kind, src.name, SCENE_FORMATS, scene=True))
    (base / "ply-points").mkdir()
    _point_cloud_ply(base / "ply-points" / "points.ply")
    seeds.append(Seed("ply-points", base / "ply-points", "points.ply", SCENE_FORMATS, scene=True))

    for name in REAL_CAMERAS:  # real frames from other writers: librealsense's lz4 chunks, rosbag's JPEG, rosbag2_py
        src = REALDATA / name
        _copy(src, base / f"real-{src.stem}")
        seeds.append(Seed(f"real-{src.stem}", base / f"real-{src.stem}", "." if src.is_dir() else src.name,
                          FIXTURE_FORMATS))
    if with_fixtures and FIXTURES.is_dir():
        for kind, rel in (("ros1", "ros1/example-unsorted-chunks.bag"), ("ros1", "ros1/no-messages.bag"),
                          ("ros1", "ros1/example-lz4.bag"), ("ros2-sqlite3", "rosbag2/talker_sqlite3"),
                          ("ros2-sqlite3", "rosbag2/cdr_test_sqlite3"), ("ros2-mcap", "rosbag2/talker_mcap"),
                          ("mcap", "mcap/empty.mcap")):
            src = FIXTURES / rel
            if src.exists():
                root = base / f"fixture-{src.stem}"
                _copy(src, root)
                seeds.append(Seed(kind, root, "." if src.is_dir() else src.name, FIXTURE_FORMATS))
    shutil.rmtree(exports)
    done.write_text(json.dumps([{"kind": s.kind, "root": str(s.root), "path": s.path, "formats": list(s.formats),
                                 "manifest": s.manifest, "scene": s.scene} for s in seeds], indent=1))
    return seeds
