"""What a written episode carries back to its recording: source, segment and version (traceability)."""

from __future__ import annotations

from typing import Any

from robokit.converters.prepare import PreparedEpisode


def trace(p: PreparedEpisode) -> dict[str, Any]:
    """`EpisodeMeta.trace()`, the segment defaulting to the written grid's first and last time."""
    fields = p.source.meta.trace()
    fields["segment"] = fields["segment"] or [int(p.timestamps[0]), int(p.timestamps[-1])]
    return fields
