"""Percentile bootstrap over items, vectorised and exact for ratio-of-sums metrics.

Every rate here is a function of a few sums over the items of one cell (EDR = Σtie / Σvalid,
LAO = Σlds / Σ(lds + ts + ols), …). Resampling items with replacement only changes how many
times each item is counted, so items with identical contributions can be pooled: the
bootstrap draws multinomial counts over the *distinct* contribution patterns, which is the
same distribution as resampling the items themselves, at a cost of B × patterns instead of
B × items. Paired metrics resample pairs together because a pair is one item's pattern.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

DEFAULT_RESAMPLES = 10_000
LEVEL = 0.95
_CHUNK = 2_000_000  # max entries of one resample × pattern block


Stat = Callable[[np.ndarray], np.ndarray]
"""Maps sums with shape (..., k) to the statistic, shape (...); NaN where undefined."""


def bootstrap_interval(
    items: pl.DataFrame,
    columns: list[str],
    stat: Stat,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """The 95% percentile interval of ``stat`` over resamples of the rows of ``items``.

    ``items`` holds one row per resampling unit (an item, or a pair) and the per-unit
    contributions in ``columns``. Undefined resamples (NaN) are left out; an interval with
    no defined resample is (NaN, NaN).
    """
    n = items.height
    if n == 0 or resamples <= 0:
        return (float("nan"), float("nan"))
    patterns = items.group_by(columns).len()
    values = patterns.select(columns).to_numpy().astype(np.float64)
    probs = patterns["len"].to_numpy() / n
    rng = np.random.default_rng(seed)
    stats = np.empty(resamples)
    step = max(1, _CHUNK // max(1, len(probs)))
    for start in range(0, resamples, step):
        size = min(step, resamples - start)
        counts = rng.multinomial(n, probs, size=size)
        stats[start : start + size] = stat(counts @ values)
    stats = stats[~np.isnan(stats)]
    if stats.size == 0:
        return (float("nan"), float("nan"))
    tail = (1 - LEVEL) / 2 * 100
    lo, hi = np.percentile(stats, [tail, 100 - tail])
    return (float(lo), float(hi))


def ratio(num: int, den: int) -> Stat:
    """sum[num] / sum[den], NaN when the denominator is 0."""

    def f(s: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(s[..., den] > 0, s[..., num] / s[..., den], np.nan)

    return f
