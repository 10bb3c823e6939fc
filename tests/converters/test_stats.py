"""Vector stats equal numpy's (min, max, mean, std, quantiles) to the last bit, computed a block at a time."""

from __future__ import annotations

import numpy as np
import pytest

from robokit.converters import stats
from robokit.converters.stats import QUANTILE_KEYS, QUANTILES, VectorStats, vector_stats


def _numpy(values: np.ndarray) -> dict[str, np.ndarray]:
    v = values.astype(np.float64).reshape(len(values), -1)
    with np.errstate(invalid="ignore", over="ignore"):
        qs = np.quantile(v, QUANTILES, axis=0)
        return {"min": v.min(axis=0), "max": v.max(axis=0), "mean": v.mean(axis=0), "std": v.std(axis=0),
                    **{k: qs[i] for i, k in enumerate(QUANTILE_KEYS)}}


def _columns(rng: np.random.Generator) -> list[np.ndarray]:
    n = 5000
    return [
        rng.normal(size=(n, 3)),
        rng.integers(0, 4, size=(n, 2)).astype(np.float32),  # ties everywhere
        np.exp(rng.uniform(-300, 300, size=n)),  # spread over 600 decades: histograms narrow slowly
        np.where(rng.random(n) < 0.3, np.inf, rng.normal(size=n)) * np.where(rng.random(n) < 0.5, -1, 1),
        np.array([[1e308], [-1e308], [0.0]] * 7),  # the range's width overflows
        np.array([2.5]),
        rng.random(n) < 0.2,  # bools as 0/1
    ]


@pytest.mark.parametrize("gather", [1 << 20, 7])
def test_equal_to_numpy(monkeypatch: pytest.MonkeyPatch, gather: int) -> None:
    """Sorting directly and narrowing by histograms first (a gather bound of 7 values) give numpy's values."""
    monkeypatch.setattr(stats, "_GATHER", gather)
    monkeypatch.setattr(stats, "BLOCK_BYTES", 8000)  # 1000 rows of one dimension
    for values in _columns(np.random.default_rng(3)):
        got, want = vector_stats(values), _numpy(values)
        for key, expected in want.items():
            if key in ("mean", "std"):  # summed a block at a time
                np.testing.assert_allclose(got[key], expected, rtol=1e-12, atol=0)
            else:
                np.testing.assert_array_equal(got[key], expected, err_msg=key)
        assert got["count"].tolist() == [len(values)]


def test_nan_as_numpy() -> None:
    values = np.array([[1.0, 2.0], [np.nan, 3.0], [0.5, 4.0]])
    got = vector_stats(values)
    assert np.isnan(got["q50"][0]) and got["q50"][1] == 3.0 and np.isnan(got["min"][0])


def test_dataset_stats_from_spooled_episodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Episodes added one by one, spilled to a file past a block, give the stats of all their rows together."""
    monkeypatch.setattr(stats, "_GATHER", 100)
    rng = np.random.default_rng(5)
    episodes = [rng.normal(size=(int(rng.integers(1, 20_000)), 4)).astype(np.float32) for _ in range(6)]
    acc = VectorStats()
    for ep in episodes:
        acc.add(ep)
    got, want = acc.stats(), _numpy(np.concatenate(episodes))
    for key in ("min", "max", *QUANTILE_KEYS):
        np.testing.assert_array_equal(got[key], want[key])
    np.testing.assert_allclose(got["std"], want["std"], rtol=1e-12)
    with pytest.raises(ValueError):
        VectorStats().stats()
