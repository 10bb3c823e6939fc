"""What a written episode carries back to its recording: source, segment and version (traceability)."""

from __future__ import annotations

import re
from typing import Any

from robokit.converters.prepare import PreparedEpisode


def trace(p: PreparedEpisode) -> dict[str, Any]:
    """`EpisodeMeta.trace()`, the segment defaulting to the written grid's first and last time."""
    fields = p.source.meta.trace()
    fields["segment"] = fields["segment"] or [int(p.timestamps[0]), int(p.timestamps[-1])]
    return fields


def file_name(episode_id: str, used: set[str], suffix: str) -> str:
    """A safe, unique file name for an episode (`<id><suffix>`, `_2`, `_3`, ... on a clash); added to `used`."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", episode_id).strip("._") or "episode"
    name, i = f"{stem}{suffix}", 2
    while name in used:
        name, i = f"{stem}_{i}{suffix}", i + 1
    used.add(name)
    return name
