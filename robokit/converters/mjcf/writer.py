"""MJCF scene writer (`--to mjcf`): `<out>/mjcf/scene.xml` plus `assets/` meshes, compiled by MuJoCo as is.

MJCF has no Gaussian splats: they are left out with a note in the log and in scene.xml (a splat-derived
collision mesh is written when --collision-from-splat asks for it). Camera trajectories cannot be animated in
MJCF: such a camera sits on a mocap body at its first pose, and `trajectories/<camera>.csv` holds the rest.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from robokit.converters.mjcf import model as mjcf
from robokit.converters.options import WriterOptions
from robokit.converters.registry import WriteResult
from robokit.converters.scene.model import Scene
from robokit.converters.scene.options import SCENE_OPTIONS, SceneOptions
from robokit.converters.scene.prepare import PreparedScene, prepare_scene
from robokit.converters.scene.writer import SceneConverter
from robokit.converters.staging import staged_dir


class MjcfWriter(SceneConverter):
    """`--to mjcf`: floor, lights, cameras, static geoms and free bodies with convex collision pieces."""

    name = "mjcf"
    description = "MuJoCo MJCF scene (scene.xml + assets/): convex collision pieces, free bodies, cameras"
    extra_options = SCENE_OPTIONS
    target_convention = mjcf.CONVENTION
    writes_splats = False  # MJCF has no splat primitive

    def write_scene(self, scene: Scene, out_dir: Path, options: WriterOptions) -> WriteResult:
        prepared = prepare_scene(scene, SceneOptions.from_writer(options), exact_meshes=False)
        result = self.start_result(prepared, options)
        notes = [f"Gaussian splat {s.name!r} ({len(s)} splats) is not representable in MJCF: left out"
                 for s in scene.splats]
        result.warnings.extend(notes)
        with staged_dir(out_dir / self.name, overwrite=options.overwrite) as root:
            self._write(prepared, root, notes)
            result.files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        result.frames = sum(len(c.poses) for c in scene.cameras)
        return result

    def check(self, format_dir: Path) -> list[str]:
        """Compile scene.xml with MuJoCo (warnings count as problems) and simulate one second."""
        from robokit.converters.mjcf.check import check_model

        return check_model(format_dir)

    def _key_points(self, prepared: PreparedScene) -> np.ndarray:
        """Object bounding-box corners and camera positions, in the MuJoCo world."""
        convention = prepared.scene.meta.convention
        points = [np.zeros((1, 3))]
        for item in prepared.objects:
            pose = self.world_pose(item.obj.pose, convention).matrix()
            corners = np.vstack([p.bounds for p in item.shapes.pieces])
            points.append(corners @ pose[:3, :3].T + pose[:3, 3])
        points += [self.world_direction(c.poses.translation, convention) for c in prepared.scene.cameras]
        return np.vstack(points)

    def _write(self, prepared: PreparedScene, root: Path, notes: list[str]) -> None:
        scene, convention = prepared.scene, prepared.scene.meta.convention
        folder = root / mjcf.ASSETS
        folder.mkdir()
        doc = mjcf.skeleton(scene.meta.name)
        xml, asset, world = doc.root, doc.asset, doc.world
        for i, note in enumerate(notes + [f"left out {name}: {reason}" for name, reason in prepared.skipped]):
            xml.insert(i, ET.Comment(f" {note.replace('--', '-')} "))
        for light in scene.lights:
            mjcf.add_light(world, light, self.world_direction(light.direction, convention),
                           self.world_direction(light.position, convention))
        if scene.ground is not None:
            mjcf.add_floor(world, scene.ground.height)
        for item in prepared.objects:
            mjcf.add_object(asset, world, folder, item, self.world_pose(item.obj.pose, convention))
        for camera in scene.cameras:
            times, poses = mjcf.add_camera(world, camera)
            if camera.animated:
                (root / "trajectories").mkdir(exist_ok=True)
                np.savetxt(root / "trajectories" / f"{camera.name}.csv", np.column_stack([times, poses]),
                           delimiter=",", header="time_s,x,y,z,qw,qx,qy,qz", comments="", fmt="%.9g")
        mjcf.set_statistic(doc.statistic, self._key_points(prepared))
        ET.indent(xml, space="  ")
        ET.ElementTree(xml).write(root / "scene.xml", encoding="unicode", xml_declaration=False)


MJCF = MjcfWriter()
