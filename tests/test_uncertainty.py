"""Bootstrap intervals: deterministic with a seed, exact pooling, and honest coverage."""

from __future__ import annotations

import numpy as np
import polars as pl

from judgeprobe.metrics.uncertainty import bootstrap_interval, ratio


def _binary(k: int, n: int) -> pl.DataFrame:
    return pl.DataFrame({"x": [1] * k + [0] * (n - k), "one": [1] * n})


def test_same_seed_same_interval_other_seed_other_draws() -> None:
    x = np.random.default_rng(3).integers(0, 100, size=300)
    items = pl.DataFrame({"x": x, "one": np.ones(300, dtype=np.int64)})
    a = bootstrap_interval(items, ["x", "one"], ratio(0, 1), 2000, seed=7)
    # Same seed, rows in another order: identical (patterns are put in a fixed order).
    assert a == bootstrap_interval(items.reverse(), ["x", "one"], ratio(0, 1), 2000, seed=7)
    assert a != bootstrap_interval(items, ["x", "one"], ratio(0, 1), 2000, seed=8)
    assert a[0] < x.mean() < a[1]


def test_pooling_identical_items_matches_resampling_items() -> None:
    # The pooled multinomial draw must match naive item resampling in distribution.
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, size=60)
    items = pl.DataFrame({"x": x, "one": np.ones(60, dtype=np.int64)})
    lo, hi = bootstrap_interval(items, ["x", "one"], ratio(0, 1), 20_000, seed=1)
    naive = x[rng.integers(0, 60, size=(20_000, 60))].mean(axis=1)
    n_lo, n_hi = np.percentile(naive, [2.5, 97.5])
    assert abs(lo - n_lo) < 0.03 and abs(hi - n_hi) < 0.03


def test_coverage_of_a_known_proportion() -> None:
    # 400 simulated studies of n = 150 items with p = 0.3: ~95% of intervals cover p.
    rng = np.random.default_rng(2024)
    covered = 0
    for study in range(400):
        k = int(rng.binomial(150, 0.3))
        lo, hi = bootstrap_interval(_binary(k, 150), ["x", "one"], ratio(0, 1), 1000, seed=study)
        covered += lo <= 0.3 <= hi
    assert 0.92 <= covered / 400 <= 0.98


def test_undefined_resamples_and_empty_input() -> None:
    items = pl.DataFrame({"x": [0, 0], "one": [0, 0]})
    lo, hi = bootstrap_interval(items, ["x", "one"], ratio(0, 1), 100)
    assert np.isnan(lo) and np.isnan(hi)
    assert np.isnan(bootstrap_interval(items.head(0), ["x", "one"], ratio(0, 1), 100)[0])


def test_single_item_gives_a_degenerate_interval() -> None:
    assert bootstrap_interval(_binary(1, 1), ["x", "one"], ratio(0, 1), 100) == (1.0, 1.0)
