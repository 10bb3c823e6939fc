"""Feature statistics (min, max, mean, std, count, quantiles) computed exactly.

Vectors are read a block at a time (a dataset's kept in a file until its stats are written); images accumulate
per-channel 256-bin histograms of sampled, strided frames, so quantiles stay exact for the sampled pixels and
episodes merge exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from robokit import heap

QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)
QUANTILE_KEYS = tuple(f"q{round(q * 100):02d}" for q in QUANTILES)


def vector_stats(values: np.ndarray) -> dict[str, np.ndarray]:
    """Stats over rows of an (N, D) array (bools as 0/1); each stat is a length-D array, count is [N]."""
    v = values[:, None] if values.ndim == 1 else values
    rows = _rows(v.shape[1])
    return _stats(lambda: (np.asarray(b, dtype=np.float64) for b in heap.blocks(v, rows)), len(v), v.shape[1])


class VectorStats:
    """Exact stats over rows added an episode at a time, the rows kept in a file (`heap.RowSpool`) and read back a
    block at a time: a dataset's global stats without holding its columns in memory."""

    def __init__(self) -> None:
        self._spool: heap.RowSpool | None = None

    def add(self, values: np.ndarray) -> None:
        """Add an (N, D) or (N,) array's rows (bools as 0/1)."""
        rows = values[:, None] if values.ndim == 1 else values
        if self._spool is None:
            self._spool = heap.RowSpool(rows.shape[1])
        for block in heap.blocks(rows, _rows(rows.shape[1])):
            self._spool.extend(block)

    def stats(self) -> dict[str, np.ndarray]:
        """`vector_stats` of every row added."""
        spool = self._spool
        if spool is None:
            raise ValueError("stats need at least one row")
        return _stats(lambda: spool.blocks(_rows(spool.width)), len(spool), spool.width)


BLOCK_BYTES = 1 << 20  # float64 values read at once when computing stats (a block and its temporaries are the
# memory: 65536 rows of 14 dimensions, 7 MiB, were a long episode's peak)


def _rows(width: int) -> int:
    """Rows of `width` values in a block."""
    return max(1, BLOCK_BYTES // (8 * max(1, width)))


_GATHER = 1 << 20  # values of one dimension sorted at once (8 MiB); more are first narrowed down by a histogram
_BINS = 1 << 12


def _stats(blocks: Callable[[], Iterator[np.ndarray]], n: int, width: int) -> dict[str, np.ndarray]:
    """min, max, mean, std (numpy's, population) and quantiles (numpy's default, linear) of `n` rows that `blocks()`
    yields as float64 blocks, each call a new pass; memory is a block's, not the rows'."""
    if n == 0:
        raise ValueError("stats need at least one row")
    with np.errstate(invalid="ignore", over="ignore"):  # infinities and NaN give NaN or inf, as numpy's do
        return _exact(blocks, n, width)


def _exact(blocks: Callable[[], Iterator[np.ndarray]], n: int, width: int) -> dict[str, np.ndarray]:
    lo, hi, total = np.full(width, np.inf), np.full(width, -np.inf), np.zeros(width)
    for b in blocks():
        lo, hi, total = np.minimum(lo, b.min(axis=0)), np.maximum(hi, b.max(axis=0)), total + b.sum(axis=0)
    mean = total / n
    squares = np.zeros(width)
    for b in blocks():
        squares += ((b - mean) ** 2).sum(axis=0)
    out = {"min": lo, "max": hi, "mean": mean, "std": np.sqrt(squares / n), "count": np.array([n], dtype=np.int64)}
    qs = np.array([_quantiles(blocks, n, d, lo[d], hi[d]) for d in range(width)]).T.reshape(len(QUANTILES), width)
    out.update({k: qs[i] for i, k in enumerate(QUANTILE_KEYS)})
    return out


def _quantiles(blocks: Callable[[], Iterator[np.ndarray]], n: int, dim: int, lo: float, hi: float) -> np.ndarray:
    """`np.quantile(column, QUANTILES)` of one dimension, exactly, from the order statistics it interpolates."""
    if np.isnan(lo) or np.isnan(hi):
        return np.full(len(QUANTILES), np.nan)  # as numpy: NaN anywhere makes every quantile NaN
    virtual = (n - 1) * np.asarray(QUANTILES)  # numpy's index formula for the linear method, to the last bit
    below = np.floor(virtual)
    gamma = virtual - below
    prev = below.astype(np.int64)
    nxt = np.minimum(prev + 1, n - 1)
    values = _order_statistics(blocks, dim, sorted({*prev.tolist(), *nxt.tolist()}), lo, hi, 0, n)
    a, b = np.array([values[i] for i in prev]), np.array([values[i] for i in nxt])
    diff = b - a  # numpy's _lerp, so the result is the same to the last bit
    return np.asarray(np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma), dtype=np.float64)


def _order_statistics(blocks: Callable[[], Iterator[np.ndarray]], dim: int, ranks: list[int], lo: float, hi: float,
                      below: int, count: int) -> dict[int, float]:
    """The values at `ranks` (0-based, in sorted order) of the column, given that the `count` values in [lo, hi]
    hold those ranks and `below` values lie under `lo`: sorted directly when few, else narrowed by a histogram."""
    if lo == hi:
        return dict.fromkeys(ranks, lo)
    if np.isinf(lo) or np.isinf(hi):
        return _past_infinities(blocks, dim, ranks, lo, hi, below, count)
    if count <= _GATHER:
        kept = np.sort(np.concatenate(list(_within(blocks, dim, lo, hi))))
        return {r: float(kept[r - below]) for r in ranks}
    scale = _BINS / (hi * 0.5 - lo * 0.5)  # halves: the width of [-1e308, 1e308] overflows
    counts = np.zeros(_BINS, dtype=np.int64)
    for c in _within(blocks, dim, lo, hi):
        counts += np.bincount(_bin(c, lo, scale), minlength=_BINS)
    starts = below + np.concatenate(([0], np.cumsum(counts)[:-1]))
    by_bin: dict[int, list[int]] = {}
    for r in ranks:
        by_bin.setdefault(int(np.searchsorted(starts, r, side="right")) - 1, []).append(r)
    wanted = np.zeros(_BINS, dtype=bool)
    wanted[list(by_bin)] = True
    bin_lo, bin_hi = np.full(_BINS, np.inf), np.full(_BINS, -np.inf)
    for c in _within(blocks, dim, lo, hi):  # each wanted bin's smallest and largest value: the next, narrower range
        bins = _bin(c, lo, scale)
        keep = wanted[bins]
        np.minimum.at(bin_lo, bins[keep], c[keep])
        np.maximum.at(bin_hi, bins[keep], c[keep])
    found: dict[int, float] = {}
    for k, rs in by_bin.items():
        found.update(_order_statistics(blocks, dim, rs, bin_lo[k], bin_hi[k], int(starts[k]), int(counts[k])))
    return found


def _past_infinities(blocks: Callable[[], Iterator[np.ndarray]], dim: int, ranks: list[int], lo: float, hi: float,
                     below: int, count: int) -> dict[int, float]:
    """`_order_statistics` when [lo, hi] reaches an infinity: ranks among the infinities are those, the others are
    looked up among the finite values."""
    neg = pos = 0
    finite_lo, finite_hi = np.inf, -np.inf
    for c in _within(blocks, dim, lo, hi):
        neg, pos = neg + int(np.count_nonzero(c == -np.inf)), pos + int(np.count_nonzero(c == np.inf))
        finite = c[np.isfinite(c)]
        if len(finite):
            finite_lo, finite_hi = min(finite_lo, finite.min()), max(finite_hi, finite.max())
    found = {r: -np.inf if r < below + neg else np.inf for r in ranks
             if r < below + neg or r >= below + count - pos}
    rest = [r for r in ranks if r not in found]
    if rest:
        found.update(_order_statistics(blocks, dim, rest, finite_lo, finite_hi, below + neg, count - neg - pos))
    return found


def _within(blocks: Callable[[], Iterator[np.ndarray]], dim: int, lo: float, hi: float) -> Iterator[np.ndarray]:
    """One pass over column `dim`, block by block: its values in [lo, hi]."""
    for b in blocks():
        c = b[:, dim]
        yield c[(c >= lo) & (c <= hi)]


def _bin(values: np.ndarray, lo: float, scale: float) -> np.ndarray:
    """Histogram bin of each value in [lo, hi]: monotone in the value, so a bin is a range of values, and lo and hi
    fall in the first and the last bin (each narrowing leaves fewer values)."""
    return np.minimum(((values * 0.5 - lo * 0.5) * scale).astype(np.int64), _BINS - 1)


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


def to_json(stats: dict[str, np.ndarray]) -> dict[str, Any]:
    """Nested lists, ints for counts, as LeRobot's stats.json stores them."""
    return {k: v.astype(np.int64).tolist() if k == "count" else v.astype(np.float64).tolist()
            for k, v in stats.items()}
