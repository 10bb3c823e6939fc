"""Rerun recordings (`--to rerun`): one `.rrd` per episode, written with rerun-sdk (the `robokit[rerun]` extra)."""
