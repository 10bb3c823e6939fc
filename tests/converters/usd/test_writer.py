from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import trimesh
import yaml
from pxr import Gf, Usd, UsdGeom, UsdPhysics, UsdValidation, UsdVol

from robokit.converters import WriteResult, get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.scene import load_scene, read_splat_ply
from robokit.errors import ConversionError, OptionError


def _open(usd_dir: Path) -> Usd.Stage:
    return Usd.Stage.Open(str(usd_dir / "scene.usda"))


def test_check_passes_and_result_summarises(usd_written: tuple[Path, WriteResult]) -> None:
    usd_dir, result = usd_written
    assert get_converter("usd").check(usd_dir) == []
    assert result.files == ["scene.usda"] and result.episodes == 1 and result.skipped == []
    assert any("splat_collision" in w for w in result.warnings)


def test_stage_metadata_and_validation(usd_written: tuple[Path, WriteResult]) -> None:
    stage = _open(usd_written[0])
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0 and UsdPhysics.GetStageKilogramsPerUnit(stage) == 1.0
    assert stage.GetDefaultPrim().GetPath() == "/World" and stage.GetPrimAtPath("/PhysicsScene").IsValid()
    context = UsdValidation.ValidationContext(UsdValidation.ValidationRegistry().GetOrLoadAllValidators())
    errors = [e.GetMessage() for e in context.Validate(stage)
              if e.GetType() == UsdValidation.ValidationErrorType.Error]
    assert errors == []
    meta = stage.GetRootLayer().customLayerData["robokit"]
    assert meta["frame_convention"] == "isaac" and meta["source_convention"] == "rayform"


def test_physics_parse(usd_written: tuple[Path, WriteResult]) -> None:
    stage = _open(usd_written[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the API; the new name is checked below
        parsed = UsdPhysics.LoadUsdPhysicsFromRange(stage, ["/"])
    assert UsdPhysics.ObjectType.Scene in parsed and UsdPhysics.ObjectType.PlaneShape in parsed
    paths, descs = parsed[UsdPhysics.ObjectType.MeshShape]
    shapes = {str(p): d for p, d in zip(paths, descs, strict=True)}
    bin_pieces = [p for p in shapes if p.startswith("/World/Objects/bin/collision/piece_")]
    assert 2 <= len(bin_pieces) <= 16
    assert all(d.approximation == UsdPhysics.Tokens.convexHull for d in shapes.values())
    cube = shapes["/World/Objects/cube/collision/piece_000"]
    assert cube.rigidBody == "/World/Objects/cube"
    assert shapes["/World/Objects/bin/collision/piece_000"].rigidBody == Usd.Prim().GetPath()  # static
    assert "/World/Objects/splat_collision/collision/piece_000" in shapes
    bodies = dict(zip(*parsed[UsdPhysics.ObjectType.RigidBody], strict=True))
    assert list(map(str, bodies)) == ["/World/Objects/cube"]
    assert UsdPhysics.MassAPI(stage.GetPrimAtPath("/World/Objects/cube")).GetMassAttr().Get() == pytest.approx(0.1)
    new = UsdPhysics.UsdPhysicsLoadStageFromPrimRange(stage, ["/"])
    assert len(new[UsdPhysics.ObjectType.MeshShape][0]) == len(paths)


def test_splat_matches_the_ply(usd_written: tuple[Path, WriteResult], scene_file: Path) -> None:
    stage = _open(usd_written[0])
    gs = UsdVol.ParticleField3DGaussianSplat(stage.GetPrimAtPath("/World/Splats/splat"))
    ply = read_splat_ply(scene_file.parent / "splat.ply")
    n = len(ply)
    assert len(gs.GetPositionsAttr().Get()) == n
    np.testing.assert_array_equal(np.array(gs.GetPositionsAttr().Get()), ply.positions)
    np.testing.assert_array_equal(np.array(gs.GetScalesAttr().Get()), ply.scales)
    np.testing.assert_array_equal(np.array(gs.GetOpacitiesAttr().Get()), ply.opacities)
    np.testing.assert_array_equal(np.array(gs.GetOrientationsAttr().Get()), ply.orientations)  # xyzw in memory
    first = gs.GetOrientationsAttr().Get()[0]
    assert first.GetReal() == pytest.approx(ply.orientations[0, 3])
    assert gs.GetRadianceSphericalHarmonicsDegreeAttr().Get() == 1
    sh = np.array(gs.GetRadianceSphericalHarmonicsCoefficientsAttr().Get())
    np.testing.assert_array_equal(sh, ply.sh.reshape(-1, 3))
    assert gs.GetRadianceSphericalHarmonicsCoefficientsAttr().GetMetadata("elementSize") == 4
    assert (np.array(gs.GetScalesAttr().Get()) > 0).all() and gs.GetExtentAttr().HasAuthoredValue()


def test_cameras(usd_written: tuple[Path, WriteResult], sample_bag: Path) -> None:
    import robokit

    stage = _open(usd_written[0])
    (episode,) = robokit.open(sample_bag)
    wrist = UsdGeom.Xformable(stage.GetPrimAtPath("/World/Cameras/wrist"))
    translate = wrist.GetOrderedXformOps()[0]
    assert translate.GetNumTimeSamples() == len(episode.streams["wrist/rgb"])
    front = UsdGeom.Xformable(stage.GetPrimAtPath("/World/Cameras/front"))
    assert front.GetOrderedXformOps()[0].GetNumTimeSamples() == 0
    assert stage.GetTimeCodesPerSecond() == 15 and stage.GetEndTimeCode() > 0


def test_camera_projects_like_opencv(tmp_path: Path, scene_file: Path) -> None:
    """A point seen by the pinhole intrinsics + rayform pose lands on the same pixel through the USD camera."""
    data = yaml.safe_load(scene_file.read_text())
    data["cameras"] = [{"name": "cam", "position": [1.5, -0.8, 1.2], "look_at": [0, 0.1, 0.7], "width": 640,
                        "height": 480, "fx": 500, "fy": 520, "cx": 300, "cy": 260}]
    data["objects"] = data["objects"][:1]
    path = scene_file.parent / "projection.yaml"
    path.write_text(yaml.safe_dump(data))
    scene = load_scene([path], [], WriterOptions())
    get_converter("usd").write_scene(scene, tmp_path, WriterOptions(extra={"collision": "convex-hull"}))
    stage = _open(tmp_path / "usd")
    frustum = UsdGeom.Camera(stage.GetPrimAtPath("/World/Cameras/cam")).GetCamera(Usd.TimeCode.Default()).frustum
    view_proj = frustum.ComputeViewMatrix() * frustum.ComputeProjectionMatrix()
    camera = scene.cameras[0]
    pose = camera.poses.matrices()[0]
    k = camera.intrinsics.k
    for point in ([0.0, 0.0, 0.7], [0.3, 0.3, 0.9], [-0.2, 0.4, 0.5]):
        cam = np.linalg.inv(pose) @ np.array([*point, 1.0])
        expected = (k @ (cam[:3] / cam[2]))[:2]
        clip = Gf.Vec4d(*point, 1.0) * view_proj
        ndc = np.array([clip[0], clip[1]]) / clip[3]
        pixel = [(ndc[0] + 1) / 2 * 640 - 0.5, (1 - ndc[1]) / 2 * 480 - 0.5]
        assert pixel == pytest.approx(expected, abs=1e-3)


def test_reference_brings_no_second_physics_scene(usd_written: tuple[Path, WriteResult]) -> None:
    host = Usd.Stage.CreateInMemory()
    host.DefinePrim("/Env").GetReferences().AddReference(str(usd_written[0] / "scene.usda"))
    parsed = UsdPhysics.UsdPhysicsLoadStageFromPrimRange(host, ["/"])
    assert UsdPhysics.ObjectType.Scene not in parsed and UsdPhysics.ObjectType.MeshShape in parsed


@pytest.mark.parametrize("fmt", ["usdc", "usdz"])
def test_binary_and_package_formats(tmp_path: Path, fmt: str) -> None:
    mesh = tmp_path / "crate.stl"
    trimesh.creation.box((0.4, 0.3, 0.3)).export(mesh)
    options = WriterOptions(extra={"usd_format": fmt, "collision": "mesh"})
    result = get_converter("usd").write_scene(load_scene([mesh], [], options), tmp_path / "out", options)
    assert result.files == [f"scene.{fmt}"]
    assert get_converter("usd").check(tmp_path / "out" / "usd") == []
    stage = Usd.Stage.Open(str(tmp_path / "out" / "usd" / f"scene.{fmt}"))
    visual = stage.GetPrimAtPath("/World/Objects/crate/visual")
    assert UsdPhysics.MeshCollisionAPI(visual).GetApproximationAttr().Get() == UsdPhysics.Tokens.none


def test_bad_inputs_leave_out_only_those_objects(tmp_path: Path, scene_file: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import coacd

    data = yaml.safe_load(scene_file.read_text())
    (scene_file.parent / "broken.obj").write_text("not a mesh\n")
    data["objects"] += [{"name": "broken", "mesh": "broken.obj"},
                        {"name": "nan", "mesh": "meshes/cube.stl", "pose": {"position": [0, float("inf"), 0]}},
                        {"name": "bin2", "mesh": "meshes/bin.ply", "collision": "convex-decomposition",
                         "pose": {"position": [2, 0, 0]}, "scale": 1.1}]
    path = scene_file.parent / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    original = coacd.run_coacd

    def fail_for_bin2(mesh: coacd.Mesh, **kwargs: object) -> object:
        if np.ptp(mesh.vertices[:, 0]) > 0.31:  # only the scaled copy
            raise RuntimeError("decomposition diverged")
        return original(mesh, **kwargs)

    monkeypatch.setattr(coacd, "run_coacd", fail_for_bin2)
    options = WriterOptions(extra={"collision": "convex-hull"})
    result = get_converter("usd").write_scene(load_scene([path], [], options), tmp_path, options)
    left_out = dict(result.skipped)
    assert set(left_out) == {"broken", "nan", "bin2"}
    assert "decomposition diverged" in left_out["bin2"] and "object 'broken'" in left_out["broken"]
    assert any(w.startswith("left out nan: ") for w in result.warnings)
    stage = _open(tmp_path / "usd")
    assert [p.GetName() for p in stage.GetPrimAtPath("/World/Objects").GetChildren()] == ["table", "bin", "cube"]
    assert len(stage.GetRootLayer().customLayerData["robokit"]["left_out"]) == 3
    assert get_converter("usd").check(tmp_path / "usd") == []


def test_refuses_recordings_and_bad_options(tmp_path: Path, scene_file: Path) -> None:
    with pytest.raises(ConversionError, match="usd writes simulator scenes: give a scene input"):
        get_converter("usd").write([], tmp_path, WriterOptions())
    scene = load_scene([scene_file], [], WriterOptions())
    with pytest.raises(OptionError, match="usd_format 'usdx'"):
        get_converter("usd").write_scene(scene, tmp_path, WriterOptions(extra={"usd_format": "usdx"}))
    with pytest.raises(OptionError, match="collision 'voxels'"):
        get_converter("usd").write_scene(scene, tmp_path, WriterOptions(extra={"collision": "voxels"}))
    assert not (tmp_path / "usd").exists()


def test_check_reports_broken_stages(tmp_path: Path) -> None:
    usd_dir = tmp_path / "usd"
    usd_dir.mkdir()
    stage = Usd.Stage.CreateNew(str(usd_dir / "scene.usda"))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    body = UsdGeom.Xform.Define(stage, "/World")
    UsdPhysics.RigidBodyAPI.Apply(body.GetPrim())
    mesh = UsdGeom.Mesh.Define(stage, "/World/m")
    mesh.CreatePointsAttr([(0, 0, 0), (1, 0, 0), (0, 1, 0)])
    mesh.CreateFaceVertexCountsAttr([3])
    mesh.CreateFaceVertexIndicesAttr([0, 1, 2])
    UsdPhysics.CollisionAPI.Apply(mesh.GetPrim())
    UsdPhysics.MeshCollisionAPI.Apply(mesh.GetPrim()).CreateApproximationAttr("none")
    gs = UsdVol.ParticleField3DGaussianSplat.Define(stage, "/World/s")
    gs.CreatePositionsAttr([(0, 0, 0)])
    gs.CreateOpacitiesAttr([3.0])
    stage.GetRootLayer().Save()
    problems = "\n".join(get_converter("usd").check(usd_dir))
    for expected in ("upAxis is Y", "no defaultPrim", "opacities must be", "no UsdPhysics scene",
                     "approximation none) on rigid body", "UsdValidation"):
        assert expected in problems
    corrupt = tmp_path / "corrupt" / "usd"
    corrupt.mkdir(parents=True)
    (corrupt / "scene.usda").write_text("#usda 1.0\n(\n  nonsense = \n")
    assert "could not open" in get_converter("usd").check(corrupt)[0]
