"""Rerun recordings (`--to rerun`): one `.rrd` per episode, written with rerun-sdk (the `robokit[rerun]` extra)."""

from robokit.converters.rerun.writer import RerunConverter

RERUN = RerunConverter()

__all__ = ["RERUN", "RerunConverter"]
