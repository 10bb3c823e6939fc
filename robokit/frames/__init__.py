"""Frame conventions (rayform, ros, opencv, opengl, isaac, mujoco) and explicit conversions between them."""

from robokit.frames.conventions import CONVENTIONS, Convention
from robokit.frames.quaternion import QUAT_ORDERS, canonical, from_order, to_order
from robokit.frames.transform import (
    camera_change,
    convert_points,
    convert_pose_stream,
    convert_poses,
    world_change,
)

__all__ = [
    "CONVENTIONS",
    "QUAT_ORDERS",
    "Convention",
    "camera_change",
    "canonical",
    "convert_points",
    "convert_pose_stream",
    "convert_poses",
    "from_order",
    "to_order",
    "world_change",
]
