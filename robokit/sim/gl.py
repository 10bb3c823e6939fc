"""MuJoCo with an offscreen OpenGL context: EGL by default on Linux, and a SimError saying how to fix a missing one.

MuJoCo picks its GL backend from `MUJOCO_GL` when it is first imported, so the default is set here, before
that import; an explicit `MUJOCO_GL` is always respected.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import Any

from robokit.errors import SimError

GL_FIX = ("install EGL and Mesa (Debian/Ubuntu: apt-get install libegl1 libgl1-mesa-dri) and set MUJOCO_GL=egl, "
          "or install OSMesa (libosmesa6) and set MUJOCO_GL=osmesa")


def import_mujoco() -> ModuleType:
    """The `mujoco` module, with `MUJOCO_GL=egl` unless set; SimError when it cannot be loaded."""
    if sys.platform.startswith("linux"):
        os.environ.setdefault("MUJOCO_GL", "egl")
    try:
        return importlib.import_module("mujoco")
    except (ImportError, RuntimeError) as exc:  # RuntimeError: an invalid MUJOCO_GL value
        raise SimError(f"cannot load MuJoCo: {exc}; {GL_FIX}") from exc


def offscreen_renderer(model: Any, width: int, height: int) -> Any:
    """A `mujoco.Renderer` of `width`×`height` pixels; SimError naming the backend when no GL context can be made."""
    mujoco = import_mujoco()
    try:
        return mujoco.Renderer(model, height=height, width=width)
    except Exception as exc:  # the GL backends raise many kinds (AttributeError, FatalError, EGL errors)
        backend = os.environ.get("MUJOCO_GL") or "unset"
        raise SimError(f"no OpenGL context for offscreen rendering (MUJOCO_GL={backend}: "
                       f"{type(exc).__name__}: {exc}); {GL_FIX}") from exc
