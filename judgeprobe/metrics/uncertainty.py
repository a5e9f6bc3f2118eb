"""Percentile bootstrap over items, vectorised and exact for count-based metrics.

Every rate here is a function of a few sums over the items of one cell (EDR = Σtie / Σvalid,
LAO = Σlds / Σ(lds + ts + ols), …). Resampling items with replacement only changes how many
times each item is counted, so items with identical contributions can be pooled: the
bootstrap draws multinomial counts over the *distinct* contribution patterns, which is the
same distribution as resampling the items themselves, at a cost of B × patterns instead of
B × items. Paired metrics resample pairs together because a pair is one item's pattern.

Continuous contributions (explanation drift) are pooled into ``BINS`` quantile bins, each
item taking its bin's mean: the sums and the point estimate are unchanged, and only the
small within-bin variance is lost from the interval.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

DEFAULT_RESAMPLES = 10_000
LEVEL = 0.95
BINS = 32
_CHUNK = 2_000_000  # max entries of one resample × pattern block


Stat = Callable[[np.ndarray], np.ndarray]
"""Maps sums with shape (..., k) to the statistic, shape (...); NaN where undefined."""


def percentile_interval(
    values: np.ndarray, weights: np.ndarray, stat: Stat, resamples: int, seed: int
) -> tuple[float, float]:
    """95% percentile interval of ``stat`` when units with contribution ``values[p]`` occur
    ``weights[p]`` times and the units are resampled with replacement."""
    n = int(weights.sum())
    if n == 0 or resamples <= 0:
        return (float("nan"), float("nan"))
    probs = weights / n
    rng = np.random.default_rng(seed)
    stats = np.empty(resamples)
    step = max(1, _CHUNK // max(1, len(probs)))
    for start in range(0, resamples, step):
        size = min(step, resamples - start)
        stats[start : start + size] = stat(rng.multinomial(n, probs, size=size) @ values)
    stats = stats[~np.isnan(stats)]
    if stats.size == 0:
        return (float("nan"), float("nan"))
    tail = (1 - LEVEL) / 2 * 100
    lo, hi = np.percentile(stats, [tail, 100 - tail])
    return (float(lo), float(hi))


def bootstrap_interval(
    items: pl.DataFrame,
    columns: list[str],
    stat: Stat,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """The interval over resamples of the rows of ``items`` (one row per unit)."""
    patterns = items.group_by(columns).len().sort(columns)  # a fixed order: seeded = repeatable
    values = patterns.select(columns).to_numpy().astype(np.float64)
    return percentile_interval(values, patterns["len"].to_numpy(), stat, resamples, seed)


def pool_continuous(items: pl.LazyFrame, column: str, by: list[str]) -> pl.LazyFrame:
    """Replace a continuous column by its quantile-bin mean within each group ``by``."""
    rank = pl.col(column).rank("ordinal").over(by) - 1
    bin_ = (rank * BINS // pl.len().over(by)).alias("_bin")
    return (
        items.with_columns(bin_)
        .with_columns(pl.col(column).mean().over([*by, "_bin"]))
        .drop("_bin")
    )


def ratio(num: int, den: int) -> Stat:
    """sum[num] / sum[den], NaN when the denominator is 0."""

    def f(s: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(s[..., den] > 0, s[..., num] / s[..., den], np.nan)

    return f
