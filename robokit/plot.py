"""A timeline picture of an episode: one row per stream with its coverage, sample density and gaps.

Drawn with Pillow (already a dependency) so `robokit info --plot` needs no plotting library.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from robokit.timeline import Episode

_KIND_COLOURS = {"numeric": (52, 120, 198), "pose": (46, 160, 67), "image": (214, 120, 30),
                 "event": (150, 80, 190), "points": (200, 60, 60)}
_ROW, _LABEL, _WIDTH, _PAD = 22, 260, 1100, 10


def gaps(timestamps: np.ndarray, factor: float = 3.0) -> list[tuple[int, int]]:
    """Intervals longer than `factor` × the median interval (dropouts)."""
    if len(timestamps) < 3:
        return []
    d = np.diff(timestamps)
    limit = factor * float(np.median(d))
    idx = np.flatnonzero(d > limit)
    return [(int(timestamps[i]), int(timestamps[i + 1])) for i in idx]


def plot_timeline(episode: Episode, path: Path) -> Path:
    """Write a PNG of every stream's coverage (bar), density (ticks) and gaps (red) to `path`."""
    streams = sorted(episode.streams.items())
    start, end = episode.start_ns, max(episode.end_ns, episode.start_ns + 1)
    height = _PAD * 2 + _ROW * (len(streams) + 2)
    img = Image.new("RGB", (_WIDTH, height), "white")
    draw = ImageDraw.Draw(img)
    span = _WIDTH - _LABEL - _PAD

    def x(t: float) -> float:
        return float(_LABEL + span * (t - start) / (end - start))

    draw.text((_PAD, _PAD), f"{episode.id}: {episode.duration_s:.2f} s", fill="black")
    for row, (name, s) in enumerate(streams, start=1):
        y = _PAD + row * _ROW
        rate = (len(s) - 1) / max((s.end_ns - s.start_ns) / 1e9, 1e-9) if len(s) > 1 else 0.0
        draw.text((_PAD, y + 4), f"{name} ({len(s)}, {rate:.1f} Hz)", fill="black")
        colour = _KIND_COLOURS.get(s.kind, (90, 90, 90))
        if not len(s):
            continue
        draw.rectangle((x(s.start_ns), y + 6, max(x(s.end_ns), x(s.start_ns) + 2), y + _ROW - 6),
                       fill=tuple(min(255, c + 150) for c in colour))
        ticks = np.unique(np.round(_LABEL + span * (s.timestamps - start) / (end - start)).astype(int))
        for tx in ticks.tolist():
            draw.line((tx, y + 4, tx, y + _ROW - 4), fill=colour)
        for a, b in gaps(s.timestamps):
            draw.rectangle((x(a), y + 2, x(b), y + _ROW - 2), outline=(220, 30, 30))
    y = _PAD + (len(streams) + 1) * _ROW
    for k in range(6):
        t = start + (end - start) * k / 5
        draw.line((x(t), y, x(t), y + 5), fill="black")
        draw.text((x(t) - 10, y + 6), f"{(t - start) / 1e9:.1f}s", fill="black")
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path)
    return path
