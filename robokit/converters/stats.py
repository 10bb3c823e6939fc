"""Feature statistics (min, max, mean, std, count, quantiles) computed exactly, without a second pass.

Vectors keep their rows (they are small); images accumulate per-channel 256-bin histograms of
sampled, strided frames, so quantiles stay exact for the sampled pixels and episodes merge exactly.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)
QUANTILE_KEYS = tuple(f"q{round(q * 100):02d}" for q in QUANTILES)


def vector_stats(values: np.ndarray) -> dict[str, np.ndarray]:
    """Stats over rows of an (N, D) array (bools as 0/1); each stat is a length-D array, count is [N]."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 1:
        v = v[:, None]
    out = {"min": v.min(axis=0), "max": v.max(axis=0), "mean": v.mean(axis=0), "std": v.std(axis=0),
           "count": np.array([len(v)], dtype=np.int64)}
    qs = np.quantile(v, QUANTILES, axis=0)
    out.update({k: qs[i] for i, k in enumerate(QUANTILE_KEYS)})
    return out


class ImageStats:
    """Per-channel histograms of uint8 frames; `stats()` gives (C, 1, 1) values in [0, 1]. Depth frames use
    `bins=65536, scale=1`: uint16 millimetres, stats in millimetres."""

    def __init__(self, channels: int = 3, max_side: int = 150, bins: int = 256, scale: float = 1 / 255) -> None:
        self.hist = np.zeros((channels, bins), dtype=np.int64)
        self.frames = 0
        self._max_side = max_side
        self._scale = scale

    def add(self, pixels: np.ndarray) -> None:
        """Count one frame's pixels, strided down so its longer side is about `max_side`."""
        step = max(1, max(pixels.shape[:2]) // self._max_side)
        px = pixels[::step, ::step]
        if px.ndim == 2:
            px = px[:, :, None]
        for c in range(self.hist.shape[0]):
            self.hist[c] += np.bincount(px[:, :, min(c, px.shape[2] - 1)].ravel(),
                                       minlength=self.hist.shape[1])
        self.frames += 1

    def merge(self, other: ImageStats) -> None:
        self.hist += other.hist
        self.frames += other.frames

    def stats(self) -> dict[str, np.ndarray]:
        bins = self.hist.shape[1]
        levels = np.arange(bins, dtype=np.float64) * self._scale
        total = self.hist.sum(axis=1)
        if not total.all():
            raise ValueError("image stats need at least one frame")
        mean = (self.hist * levels).sum(axis=1) / total
        var = (self.hist * (levels[None, :] - mean[:, None]) ** 2).sum(axis=1) / total
        cdf = np.cumsum(self.hist, axis=1) / total[:, None]
        present = self.hist > 0
        out = {
            "min": levels[present.argmax(axis=1)],
            "max": levels[bins - 1 - present[:, ::-1].argmax(axis=1)],
            "mean": mean,
            "std": np.sqrt(var),
        }
        for q, key in zip(QUANTILES, QUANTILE_KEYS, strict=True):
            out[key] = levels[(cdf < q).sum(axis=1).clip(0, bins - 1)]
        shaped = {k: v.reshape(-1, 1, 1) for k, v in out.items()}
        shaped["count"] = np.array([self.frames], dtype=np.int64)
        return shaped


def merge_image_stats(parts: Sequence[ImageStats]) -> ImageStats:
    merged = copy.deepcopy(parts[0])
    for part in parts[1:]:
        merged.merge(part)
    return merged


def to_json(stats: dict[str, np.ndarray]) -> dict[str, Any]:
    """Nested lists, ints for counts, as LeRobot's stats.json stores them."""
    return {k: v.astype(np.int64).tolist() if k == "count" else v.astype(np.float64).tolist()
            for k, v in stats.items()}
