"""LeRobot v3.0 datasets (`--to lerobot`)."""
