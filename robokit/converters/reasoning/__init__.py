"""Reasoning-VLM training sets from completed scenes (`--to cosmos-reason-v1.0`, `--to tao-vl-reason-v1.0`)."""

from robokit.converters.reasoning.writer import ANNOTATED, CosmosReasonWriter, TaoVlReasonWriter, write_annotated

COSMOS_REASON = CosmosReasonWriter()
TAO_VL_REASON = TaoVlReasonWriter()

__all__ = ["ANNOTATED", "COSMOS_REASON", "TAO_VL_REASON", "write_annotated"]
