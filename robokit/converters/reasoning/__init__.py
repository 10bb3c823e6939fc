"""Reasoning-VLM training sets from completed scenes (`--to cosmos-reason-v1.0`, `--to tao-vl-reason-v1.0`)."""
