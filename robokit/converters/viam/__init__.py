"""Viam datasets: binary (`--to viam-binary`) and sequence (`--to viam-sequence`), as `viam dataset export` writes."""

from robokit.converters.viam.binary import ViamBinaryWriter
from robokit.converters.viam.sequence import ViamSequenceWriter

VIAM_BINARY = ViamBinaryWriter()
VIAM_SEQUENCE = ViamSequenceWriter()

__all__ = ["VIAM_BINARY", "VIAM_SEQUENCE", "ViamBinaryWriter", "ViamSequenceWriter"]
