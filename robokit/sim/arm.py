"""A compiled MuJoCo model and its actuated joints by name: read and set the joint state, the tool and cube poses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import numpy.typing as npt

from robokit.errors import SimError
from robokit.sim.scene import CUBE, TOOL_SITE

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


def compile_model(source: Path | str) -> Any:
    """An MjModel from an MJCF file (Path) or MJCF text (str); SimError with the compiler's message."""
    try:
        if isinstance(source, Path):
            if not source.is_file():
                raise SimError(f"{source}: no such model file")
            return mujoco.MjModel.from_xml_path(str(source))
        return mujoco.MjModel.from_xml_string(source)
    except ValueError as exc:
        where = source if isinstance(source, Path) else "the MJCF text"
        raise SimError(f"{where}: the model does not compile: {exc}") from exc


def _names(model: Any, kind: Any, count: int) -> list[str]:
    return [mujoco.mj_id2name(model, kind, i) or "" for i in range(count)]


def _fixed(model: Any, tendon: int) -> bool:
    """Whether a tendon is a fixed (joint) tendon: a weighted sum of joint positions."""
    first = model.tendon_adr[tendon]
    return bool((model.wrap_type[first:first + model.tendon_num[tendon]] == mujoco.mjtWrap.mjWRAP_JOINT).all())


@dataclass(frozen=True)
class Arm:
    """Actuators named like the published joints, in `names` order; joint actuators and fixed-tendon ones.

    A tendon actuator's joint value is its tendon length; setting it moves every joint of the tendon by the
    same amount (a parallel gripper whose fingers are coupled).
    """

    model: Any
    names: tuple[str, ...]
    actuators: Ints
    joint_dofs: Ints  # per actuator: its joint's dof, −1 for tendon actuators
    set_qpos: tuple[tuple[Ints, float], ...]  # per actuator: qpos addresses to write and the value's scale
    tool_site: int
    cube_qpos: int  # qpos address of the cube's free joint, −1 when the model has none

    @classmethod
    def of(cls, model: Any, names: tuple[str, ...], tool_site: str = TOOL_SITE) -> Arm:
        """The arm of `model` for joint `names`; SimError naming what the model has when one is missing."""
        actuators = _names(model, mujoco.mjtObj.mjOBJ_ACTUATOR, model.nu)
        missing = [n for n in names if n not in actuators]
        if missing:
            raise SimError(f"the model has no actuator for joint(s) {', '.join(missing)}; "
                           f"its actuators: {', '.join(actuators) or 'none'}")
        site = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, tool_site)
        if site < 0:
            sites = _names(model, mujoco.mjtObj.mjOBJ_SITE, model.nsite)
            raise SimError(f"the model has no site {tool_site!r}; its sites: {', '.join(sites) or 'none'}")
        ids = np.array([actuators.index(n) for n in names], dtype=np.int64)
        dofs, setters = [], []
        for a in ids:
            kind, target = int(model.actuator_trntype[a]), int(model.actuator_trnid[a, 0])
            if kind == mujoco.mjtTrn.mjTRN_JOINT:
                dofs.append(int(model.jnt_dofadr[target]))
                setters.append((np.array([model.jnt_qposadr[target]], dtype=np.int64), 1.0))
            elif kind == mujoco.mjtTrn.mjTRN_TENDON and _fixed(model, target):
                wraps = slice(model.tendon_adr[target], model.tendon_adr[target] + model.tendon_num[target])
                dofs.append(-1)
                setters.append((model.jnt_qposadr[model.wrap_objid[wraps]].astype(np.int64),
                                1.0 / float(model.wrap_prm[wraps].sum())))
            else:
                raise SimError(f"actuator {names[len(dofs)]!r}: only joint and fixed-tendon actuators can be replayed")
        free = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE
                and mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) == CUBE]
        return cls(model, names, ids, np.array(dofs, dtype=np.int64), tuple(setters), site,
                   int(model.jnt_qposadr[free[0]]) if free else -1)

    def state(self, data: Any) -> tuple[Floats, Floats, Floats]:
        """Positions, velocities and efforts (actuator force plus gravity compensation) in `names` order."""
        effort = data.actuator_force[self.actuators].copy()
        joints = self.joint_dofs >= 0
        effort[joints] += data.qfrc_gravcomp[self.joint_dofs[joints]]
        return data.actuator_length[self.actuators].copy(), data.actuator_velocity[self.actuators].copy(), effort

    def set_positions(self, data: Any, positions: Floats) -> None:
        """Write joint `positions` (in `names` order) into `data.qpos`; nothing is recomputed."""
        for (addresses, scale), value in zip(self.set_qpos, positions, strict=True):
            data.qpos[addresses] = value * scale

    def set_state(self, data: Any, positions: Floats) -> None:
        """Put the joints at `positions` (in `names` order), at rest, with the controls holding them there."""
        self.set_positions(data, positions)
        data.qvel[:] = 0.0
        data.ctrl[self.actuators] = positions
        mujoco.mj_forward(self.model, data)

    def tool_pose(self, data: Any) -> tuple[Floats, Floats]:
        """The tool site's position (3,) and rotation matrix (3×3) in the world (after mj_forward or a step)."""
        return data.site_xpos[self.tool_site].copy(), data.site_xmat[self.tool_site].reshape(3, 3).copy()
