"""USD scene writer (`--to usd`): one stage `<out>/usd/scene.usda|usdc|usdz` for Isaac Sim / Isaac Lab."""

from __future__ import annotations

from pathlib import Path

from pxr import Sdf, UsdGeom, UsdUtils

from robokit.converters.options import WriterOptions
from robokit.converters.registry import ExtraOption, WriteResult
from robokit.converters.scene.model import Scene
from robokit.converters.scene.options import SCENE_OPTIONS, SceneOptions
from robokit.converters.scene.prepare import PreparedScene, prepare_scene
from robokit.converters.scene.writer import SceneConverter
from robokit.converters.staging import staged_dir
from robokit.converters.usd import stage as build

USD_FORMATS = ("usda", "usdc", "usdz")
LARGE_SPLAT_COUNT = 500_000
USD_FORMAT = ExtraOption("usd_format", str, "usda", "USD file: usda (text), usdc (binary) or usdz (package).",
                         USD_FORMATS)
EXTRA_OPTIONS = (*SCENE_OPTIONS, USD_FORMAT)


class UsdWriter(SceneConverter):
    """`--to usd`: splats as UsdVol ParticleField3DGaussianSplat, meshes with UsdPhysics colliders."""

    name = "usd"
    description = "OpenUSD stage: Gaussian splats, UsdPhysics colliders, cameras (Isaac Sim / Isaac Lab)"
    extra_options = EXTRA_OPTIONS
    target_convention = build.CONVENTION

    def write_scene(self, scene: Scene, out_dir: Path, options: WriterOptions) -> WriteResult:
        fmt = options.value(USD_FORMAT)
        prepared = prepare_scene(scene, SceneOptions.from_writer(options), exact_meshes=True)
        result = self.start_result(prepared, options)
        if fmt == "usda" and sum(len(s) for s in scene.splats) > LARGE_SPLAT_COUNT:
            result.warnings.append("a large splat as usda text is slow to write and open; --usd-format usdc is "
                                   "binary and several times smaller")
        with staged_dir(out_dir / self.name, overwrite=options.overwrite) as root:
            layer = root / ("scene.usdc" if fmt == "usdz" else f"scene.{fmt}")
            self._author(prepared, layer)
            if fmt == "usdz":
                UsdUtils.CreateNewUsdzPackage(Sdf.AssetPath(str(layer)), str(root / "scene.usdz"))
                layer.unlink()
            result.files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        result.frames = sum(len(c.poses) for c in scene.cameras)
        return result

    def check(self, format_dir: Path) -> list[str]:
        """Open the stage: metadata, UsdValidation errors, splat attributes, UsdPhysics parse."""
        from robokit.converters.usd.check import check_stage

        return check_stage(format_dir)

    def _author(self, prepared: PreparedScene, path: Path) -> None:
        scene, convention = prepared.scene, prepared.scene.meta.convention
        stage, world = build.new_stage(path, {
            "name": scene.meta.name, "sources": list(scene.meta.sources), "source_convention": convention,
            "frame_convention": build.CONVENTION, "units": "m",
            "quat_order": "USDA text (w, x, y, z); Isaac Lab 3 APIs take (x, y, z, w)",
            "left_out": [f"{name}: {reason}" for name, reason in prepared.skipped]})
        top = str(world.GetPath())
        for group, present in (("Objects", prepared.objects), ("Splats", scene.splats),
                               ("Cameras", scene.cameras), ("Lights", True)):
            if present:
                UsdGeom.Xform.Define(stage, f"{top}/{group}")
        if scene.ground is not None:
            build.add_ground(stage, top, scene.ground.height, scene.ground.size)
        for item in prepared.objects:
            build.add_object(stage, f"{top}/Objects", item, self.world_pose(item.obj.pose, convention))
        for splat in scene.splats:
            build.add_splat(stage, f"{top}/Splats", splat, self.world_pose(splat.pose, convention))
        start_ns, codes_per_second = build.camera_clock(scene.cameras)
        end = 0.0
        for camera in scene.cameras:
            end = max(end, build.add_camera(stage, f"{top}/Cameras", camera, start_ns, codes_per_second))
        if end > 0:
            stage.SetTimeCodesPerSecond(codes_per_second)
            stage.SetStartTimeCode(0.0)
            stage.SetEndTimeCode(end)
        for light in scene.lights:
            build.add_light(stage, f"{top}/Lights", light, self.world_direction(light.direction, convention),
                            self.world_direction(light.position, convention))
        build.add_dome(stage, f"{top}/Lights")
        stage.GetRootLayer().Save()


USD = UsdWriter()
