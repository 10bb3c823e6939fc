"""RLDS datasets in TFDS prepared directories (`--to rlds`), written and read without TensorFlow."""

from robokit.converters.rlds.writer import RldsWriter

RLDS = RldsWriter()

__all__ = ["RLDS", "RldsWriter"]
