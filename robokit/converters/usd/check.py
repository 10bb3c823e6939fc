"""Checks a written USD scene with usd-core: stage metadata, UsdValidation, splat attributes, physics parse."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from pxr import Tf, Usd, UsdGeom, UsdPhysics, UsdValidation, UsdVol

STAGE_NAMES = ("scene.usda", "scene.usdc", "scene.usdz")


def find_stage(format_dir: Path) -> Path | None:
    """The scene file in a `usd/` folder, if any."""
    return next((format_dir / n for n in STAGE_NAMES if (format_dir / n).is_file()), None)


def check_stage(format_dir: Path) -> list[str]:
    """Problems found in the stage under `format_dir` (empty: it passed)."""
    path = find_stage(format_dir)
    if path is None:
        return [f"{format_dir}: no {' / '.join(STAGE_NAMES)}"]
    try:
        stage = Usd.Stage.Open(str(path))  # keep the stage referenced while its prims are used
    except Tf.ErrorException as exc:
        return [f"{path.name}: usd-core could not open it: {str(exc).strip()}"]
    problems = _metadata(stage) + _validation(stage)
    for prim in stage.Traverse():
        if prim.IsA(UsdVol.ParticleField3DGaussianSplat):
            problems += splat_problems(UsdVol.ParticleField3DGaussianSplat(prim))
    return problems + physics_problems(stage)


def _metadata(stage: Usd.Stage) -> list[str]:
    problems = []
    if UsdGeom.GetStageUpAxis(stage) != UsdGeom.Tokens.z:
        problems.append(f"upAxis is {UsdGeom.GetStageUpAxis(stage)}, expected Z")
    if UsdGeom.GetStageMetersPerUnit(stage) != 1.0:
        problems.append(f"metersPerUnit is {UsdGeom.GetStageMetersPerUnit(stage)}, expected 1")
    if UsdPhysics.GetStageKilogramsPerUnit(stage) != 1.0:
        problems.append(f"kilogramsPerUnit is {UsdPhysics.GetStageKilogramsPerUnit(stage)}, expected 1")
    if not stage.GetDefaultPrim().IsValid():
        problems.append("no defaultPrim")
    return problems


def _validation(stage: Usd.Stage) -> list[str]:
    """Errors (not warnings) reported by every registered UsdValidation validator."""
    context = UsdValidation.ValidationContext(UsdValidation.ValidationRegistry().GetOrLoadAllValidators())
    errors = [e for e in context.Validate(stage) if e.GetType() == UsdValidation.ValidationErrorType.Error]
    return [f"UsdValidation {e.GetName()}: {e.GetMessage()}" for e in errors]


def splat_problems(gs: UsdVol.ParticleField3DGaussianSplat) -> list[str]:
    """The acceptance checks of one splat prim: applied APIs, finite positions, linear values, SH length."""
    prim, where = gs.GetPrim(), str(gs.GetPath())
    problems = [f"{where}: missing {api.__name__}" for api in (UsdVol.ParticleFieldPositionBaseAPI,
                                                                UsdVol.ParticleFieldKernelBaseAPI,
                                                                UsdVol.ParticleFieldRadianceBaseAPI)
                if not prim.HasAPI(api)]
    positions = np.array(gs.GetPositionsAttr().Get() or [], dtype=np.float64).reshape(-1, 3)
    n = len(positions)
    if n == 0 or not np.isfinite(positions).all():
        return [*problems, f"{where}: {n} positions, all must be finite and at least one"]
    scales = np.array(gs.GetScalesAttr().Get() or [], dtype=np.float64)
    quats = np.array(gs.GetOrientationsAttr().Get() or [], dtype=np.float64)
    opacities = np.array(gs.GetOpacitiesAttr().Get() or [], dtype=np.float64)
    degree = gs.GetRadianceSphericalHarmonicsDegreeAttr().Get()
    sh = np.array(gs.GetRadianceSphericalHarmonicsCoefficientsAttr().Get() or [], dtype=np.float64)
    if scales.shape != (n, 3) or not (scales > 0).all():
        problems.append(f"{where}: scales must be (N, 3) and positive (linear, not log)")
    if quats.shape != (n, 4) or not np.allclose(np.linalg.norm(quats, axis=1), 1.0, atol=1e-3):
        problems.append(f"{where}: orientations must be (N, 4) unit quaternions")
    if opacities.shape != (n,) or not ((opacities >= 0) & (opacities <= 1)).all():
        problems.append(f"{where}: opacities must be (N,) in [0, 1] (linear, not logits)")
    if degree not in (0, 1, 2, 3) or sh.shape != (n * (degree + 1) ** 2, 3):
        problems.append(f"{where}: SH degree {degree} needs {n}·(d+1)² coefficients, has {len(sh)}")
    if not gs.GetExtentAttr().HasAuthoredValue():
        problems.append(f"{where}: extent not authored")
    return problems


def physics_problems(stage: Usd.Stage) -> list[str]:
    """UsdPhysics parse: a physics scene, at least one collider, and no triangle mesh on a rigid body."""
    parsed = UsdPhysics.UsdPhysicsLoadStageFromPrimRange(stage, ["/"])
    problems = []
    if UsdPhysics.ObjectType.Scene not in parsed:
        problems.append("no UsdPhysics scene (/PhysicsScene)")
    if not any(t.name.endswith("Shape") for t in parsed):
        problems.append("no collision shape")
    paths, descs = parsed.get(UsdPhysics.ObjectType.MeshShape, ([], []))
    for path, desc in zip(paths, descs, strict=True):
        points = UsdGeom.Mesh(stage.GetPrimAtPath(path)).GetPointsAttr().Get() or []
        if len(points) < 3:
            problems.append(f"{path}: collision mesh has {len(points)} points")
        if desc.rigidBody != path.emptyPath and desc.approximation == UsdPhysics.Tokens.none:
            problems.append(f"{path}: triangle-mesh collider (approximation none) on rigid body {desc.rigidBody}")
    return problems
