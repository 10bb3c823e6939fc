"""MuJoCo simulator: a built-in pick-and-place scene, recorded as ROS 2 bags and replayed from exported datasets.

Importing the package loads MuJoCo with an offscreen GL backend (EGL unless `MUJOCO_GL` says otherwise), or
raises SimError saying how to install one.
"""

from robokit.sim.gl import import_mujoco

import_mujoco()
