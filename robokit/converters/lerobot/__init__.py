"""LeRobot v3.0 datasets (`--to lerobot`)."""

from robokit.converters.lerobot.writer import LeRobotWriter

LEROBOT = LeRobotWriter()

__all__ = ["LEROBOT", "LeRobotWriter"]
