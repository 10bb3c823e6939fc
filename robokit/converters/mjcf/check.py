"""Checks a written MJCF scene with MuJoCo: compiles without warnings, simulates, free bodies stay sane."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

SETTLE_SECONDS = 1.0
MAX_SPEED = 20.0  # m/s: faster than this after settling means the simulation exploded
FLOOR_TOLERANCE = 0.01  # m a body's centre may sink below the floor


@contextmanager
def captured_warnings() -> Iterator[list[str]]:
    """MuJoCo warnings (compiler and runtime) collected into a list instead of printed."""
    seen: list[str] = []
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(seen.append)
    try:
        yield seen
    finally:
        mujoco.set_mju_user_warning(previous)


@dataclass(frozen=True)
class Simulation:
    """What a short simulation showed: the model, its final state, the problems found."""

    model: mujoco.MjModel
    data: mujoco.MjData
    problems: list[str]


def simulate(path: Path, seconds: float = SETTLE_SECONDS) -> Simulation | list[str]:
    """Compile `path` and step `seconds`; the problems when it does not compile."""
    with captured_warnings() as warnings:
        try:
            model = mujoco.MjModel.from_xml_path(str(path))
        except ValueError as exc:
            return [f"MuJoCo could not compile {path.name}: {str(exc).strip()}"]
        data = mujoco.MjData(model)
        problems = [f"compiler warning: {w}" for w in warnings]
        compiled = len(warnings)
        while data.time < seconds:
            mujoco.mj_step(model, data)
            if not (np.isfinite(data.qpos).all() and np.isfinite(data.qvel).all()):
                problems.append(f"state became non-finite at t={data.time:.3f} s")
                break
        problems += [f"runtime warning: {w}" for w in warnings[compiled:]]
    counts = {mujoco.mjtWarning(i).name: int(n) for i, n in enumerate(data.warning.number) if n}
    problems += [f"MuJoCo warning {name} ×{n}" for name, n in counts.items()]
    return Simulation(model, data, problems + body_problems(model, data))


def body_problems(model: mujoco.MjModel, data: mujoco.MjData) -> list[str]:
    """Free bodies must stay above the floor (if any) and come to rest, not fly off."""
    floors = [model.geom_pos[g][2] for g in range(model.ngeom)
              if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE and model.geom_bodyid[g] == 0]
    problems = []
    for j in range(model.njnt):
        if model.jnt_type[j] != mujoco.mjtJoint.mjJNT_FREE:
            continue
        body = int(model.jnt_bodyid[j])
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, body)
        z = float(data.xipos[body][2])
        speed = float(np.linalg.norm(data.qvel[model.jnt_dofadr[j]:model.jnt_dofadr[j] + 3]))
        if floors and z < max(floors) - FLOOR_TOLERANCE:
            problems.append(f"body {name!r} fell through the floor (z = {z:.3f} m)")
        if speed > MAX_SPEED:
            problems.append(f"body {name!r} moves at {speed:.1f} m/s after {data.time:.1f} s (exploded)")
    for g in range(model.ngeom):
        colliding = model.geom_contype[g] or model.geom_conaffinity[g]
        if colliding and model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH and \
                model.mesh_graphadr[model.geom_dataid[g]] < 0:
            problems.append(f"geom {mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g)!r} has no convex hull")
    return problems


def check_model(format_dir: Path) -> list[str]:
    """Problems found in `format_dir/scene.xml` (empty: it passed)."""
    path = format_dir / "scene.xml"
    if not path.is_file():
        return [f"{format_dir}: no scene.xml"]
    result = simulate(path)
    return result if isinstance(result, list) else result.problems
