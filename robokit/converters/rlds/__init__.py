"""RLDS datasets in TFDS prepared directories (`--to rlds`), written and read without TensorFlow."""
