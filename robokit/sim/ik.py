"""Inverse kinematics of the arm with MuJoCo's own Jacobians (mj_jacSite), damped least squares.

Solved on a scratch MjData, so the simulated state is never touched.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
import numpy.typing as npt

from robokit.sim.scene import ARM_JOINTS, TOOL_SITE

Floats = npt.NDArray[np.float64]


def pointing_down(yaw: float) -> Floats:
    """The tool rotation (3×3) with its approach axis pointing down and its fingers turned by `yaw` rad."""
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ np.diag([-1.0, 1.0, -1.0])


class Kinematics:
    """Forward and inverse kinematics of the tool site over the arm joints."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.data = mujoco.MjData(model)
        self.site = model.site(TOOL_SITE).id
        joints = [model.joint(j) for j in ARM_JOINTS]
        self.qpos = np.array([j.qposadr[0] for j in joints])
        self.dofs = np.array([j.dofadr[0] for j in joints])
        self.low, self.high = np.array([j.range for j in joints]).T
        self._jacp = np.zeros((3, model.nv))
        self._jacr = np.zeros((3, model.nv))

    def forward(self, q: Floats) -> tuple[Floats, Floats]:
        """Tool position (3,) and rotation (3×3) for arm joints `q`."""
        self.data.qpos[self.qpos] = q
        mujoco.mj_kinematics(self.model, self.data)
        return self.data.site_xpos[self.site].copy(), self.data.site_xmat[self.site].reshape(3, 3).copy()

    def _error(self, q: Floats, position: Floats, rotation: Floats) -> Floats:
        pos, rot = self.forward(q)
        err = np.zeros(6)
        err[:3] = position - pos
        current, target, diff = np.zeros(4), np.zeros(4), np.zeros(4)
        mujoco.mju_mat2Quat(current, rot.ravel())
        mujoco.mju_mat2Quat(target, rotation.ravel())
        mujoco.mju_negQuat(current, current)
        mujoco.mju_mulQuat(diff, target, current)  # world-frame rotation from the current to the target
        mujoco.mju_quat2Vel(err[3:], diff, 1.0)
        return err

    def solve(self, position: Floats, rotation: Floats, q0: Floats, iterations: int = 30,
              tolerance: float = 1e-5, damping: float = 1e-3) -> Floats:
        """Arm joints putting the tool at `position` with `rotation`, starting from `q0`, within joint limits."""
        q = np.clip(np.asarray(q0, dtype=np.float64), self.low, self.high)
        for _ in range(iterations):
            err = self._error(q, position, rotation)
            if float(err @ err) < tolerance**2:
                break
            mujoco.mj_comPos(self.model, self.data)
            mujoco.mj_jacSite(self.model, self.data, self._jacp, self._jacr, self.site)
            jac = np.vstack([self._jacp[:, self.dofs], self._jacr[:, self.dofs]])
            step = jac.T @ np.linalg.solve(jac @ jac.T + damping * np.eye(6), err)
            q = np.clip(q + step, self.low, self.high)
        return q
