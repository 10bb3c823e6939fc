"""MuJoCo MJCF scenes (`--to mjcf`): convex collision pieces, free bodies, floor, lights, cameras."""

from robokit.converters.mjcf.writer import MjcfWriter

MJCF = MjcfWriter()

__all__ = ["MJCF", "MjcfWriter"]
