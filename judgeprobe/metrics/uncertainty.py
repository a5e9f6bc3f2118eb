"""Percentile bootstrap over documents (the cluster bootstrap).

It is vectorised and exact for count-based metrics.

Every rate here is a function of a few sums over the units of one cell (EDR = Σtie / Σvalid,
LAO = Σlds / Σ(lds + ts + ols), …). Items built from one document are not independent, so
the resampling unit is the document (docs/metrics.md): a resample draws documents with
replacement and takes all of each document's items, orders and seeds — i.e. the document's
*summed* contribution. Resampling documents only changes how many times each document is
counted, so documents with identical sums can be pooled: the bootstrap draws multinomial
counts over the *distinct* contribution patterns, which is the same distribution as
resampling the documents themselves, at a cost of B × patterns instead of B × documents.
Paired metrics keep their pairs because a pair lives inside its document's sum; a paired
*difference* between two cells stacks both cells' sums into one pattern, so both arms are
drawn with the same documents. With one item per document this is the item bootstrap.

Continuous contributions (explanation drift) are pooled into ``BINS`` quantile bins, each
document taking its bin's mean: the sums and the point estimate are unchanged, and only the
small within-bin variance is lost from the interval.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np
import polars as pl
from scipy.stats import binomtest

DEFAULT_RESAMPLES = 10_000
LEVEL = 0.95
BINS = 32
_CHUNK = 2_000_000  # max entries of one resample × pattern block


T = TypeVar("T")
Stat = Callable[[np.ndarray], np.ndarray]
"""Maps sums with shape (..., k) to the statistic, shape (...); NaN where undefined."""
Patterns = tuple[np.ndarray, np.ndarray]
"""Distinct contribution patterns (rows) and how many units have each."""
Interval = tuple[float, float]
"""A 95% interval's bounds; NaN where it is undefined."""


def nan_to_none(x: float | None) -> float | None:
    """NaN (undefined) as a missing value: empty in a CSV file, "–" in a table."""
    return None if x is None or np.isnan(x) else float(x)


def sign_test_p(k: int, n: int) -> float | None:
    """Exact two-sided sign test of k successes in n trials at p = 1/2; None when n = 0.

    On the discordant units of a paired 0/1 comparison (k one way, n − k the other) this is
    McNemar's exact test. scipy's ``binomtest`` sums the tail in floating point: under a
    millisecond at any n.
    """
    if n <= 0:
        return None
    return float(binomtest(k, n, 0.5).pvalue)


def sign_test_ps(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``sign_test_p`` of many (k, n) at once, NaN where n = 0; each distinct pair tested once."""
    pairs = list(zip(np.asarray(k).tolist(), np.asarray(n).tolist(), strict=True))
    tested = {pair: sign_test_p(*pair) for pair in set(pairs)}
    got = [tested[pair] for pair in pairs]
    return np.array([np.nan if p is None else p for p in got], dtype=np.float64)


def resampled(
    values: np.ndarray, weights: np.ndarray, stats: Mapping[str, Stat], resamples: int, seed: int
) -> dict[str, np.ndarray]:
    """Each of ``stats`` on ``resamples`` resamples of the units, NaN where it is undefined.

    Units with contribution ``values[p]`` occur ``weights[p]`` times and are resampled with
    replacement; one draw of resamples serves every statistic. No units: no resamples.
    """
    n = int(weights.sum())
    if n == 0 or resamples <= 0:
        return {name: np.empty(0) for name in stats}
    probs = weights / n
    rng = np.random.default_rng(seed)
    drawn = {name: np.empty(resamples) for name in stats}
    step = max(1, _CHUNK // max(1, len(probs)))
    for start in range(0, resamples, step):
        size = min(step, resamples - start)
        sums = rng.multinomial(n, probs, size=size) @ values
        for name, stat in stats.items():
            drawn[name][start : start + size] = stat(sums)
    return drawn


def percentile(drawn: np.ndarray) -> Interval:
    """The 95% percentile interval of the resamples where a statistic is defined."""
    got = drawn[~np.isnan(drawn)]
    if not got.size:
        return float("nan"), float("nan")
    tail = (1 - LEVEL) / 2 * 100
    lo, hi = np.percentile(got, [tail, 100 - tail])
    return float(lo), float(hi)


def percentile_intervals(
    values: np.ndarray, weights: np.ndarray, stats: Mapping[str, Stat], resamples: int, seed: int
) -> dict[str, Interval]:
    """95% percentile interval of each of ``stats`` over resampled units (``resampled``)."""
    drawn = resampled(values, weights, stats, resamples, seed)
    return {name: percentile(got) for name, got in drawn.items()}


def percentile_interval(
    values: np.ndarray, weights: np.ndarray, stat: Stat, resamples: int, seed: int
) -> Interval:
    """``percentile_intervals`` of one statistic."""
    return percentile_intervals(values, weights, {"": stat}, resamples, seed)[""]


def shared_intervals(
    separate: Mapping[str, tuple[Patterns, Stat]],
    union: Patterns,
    columns: Mapping[str, list[int]],
    resamples: int,
    seed: int,
) -> dict[str, Interval]:
    """The intervals of several metrics of one cell (or comparison).

    Each metric is given with its own patterns. They are read from one draw over ``union`` (the
    patterns of all their columns; ``columns`` places each metric's columns in it) when that
    has no more patterns than the separate draws together: the cost is resamples × patterns
    either way.
    """
    if not separate:
        return {}
    if len(union[1]) > sum(len(p[1]) for p, _ in separate.values()):
        return {
            name: percentile_interval(*p, stat, resamples, seed)
            for name, (p, stat) in separate.items()
        }
    stats = {name: _take(stat, columns[name]) for name, (_, stat) in separate.items()}
    return percentile_intervals(*union, stats, resamples, seed)


def parallel(tasks: Sequence[Callable[[], T]]) -> list[T]:
    """Run independent bootstrap tasks on every core, results in task order.

    NumPy draws the multinomial counts and multiplies the matrices without the GIL, and each
    task seeds its own generator, so threads give the same numbers as a loop, faster.
    """
    workers = min(len(tasks), os.cpu_count() or 1)
    if workers <= 1:
        return [task() for task in tasks]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda task: task(), tasks))


def _take(stat: Stat, index: list[int]) -> Stat:
    def f(s: np.ndarray) -> np.ndarray:
        return stat(s[..., index])

    return f


def bootstrap_interval(
    items: pl.DataFrame,
    columns: list[str],
    stat: Stat,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    by: str | None = None,
) -> Interval:
    """The interval of ``stat`` of the summed ``columns`` over resamples of the units of ``items``.

    Units as in ``unit_patterns``.
    """
    return percentile_interval(*unit_patterns(items, columns, by), stat, resamples, seed)


def unit_patterns(items: pl.DataFrame, columns: list[str], by: str | None = None) -> Patterns:
    """The distinct contributions of the units of ``items`` to ``columns``, and their counts.

    Each row is a unit, or with ``by`` (e.g. ``document_id``) rows sharing that value form one unit,
    drawn together.
    """
    if by is not None:
        items = items.group_by(by).agg(pl.col(columns).sum())
    patterns = items.group_by(columns).len().sort(columns)  # a fixed order: seeded = repeatable
    return patterns.select(columns).to_numpy().astype(np.float64), patterns["len"].to_numpy()


def by_group(
    frame: pl.DataFrame, group: list[str], columns: list[str]
) -> dict[tuple[str, ...], np.ndarray]:
    """``columns`` as a float array per value of ``group``, rows in their order in ``frame``.

    One conversion for the whole table: a Polars call per cell costs about a millisecond,
    which thousands of cells and comparisons would pay again and again.
    """
    if frame.is_empty():
        return {}
    frame = frame.with_columns(pl.col(group).cast(pl.String)).sort(group, maintain_order=True)
    values = frame.select(columns).to_numpy().astype(np.float64)
    run = frame.select(pl.struct(group).rle_id()).to_series().to_numpy()
    starts = np.flatnonzero(np.r_[True, run[1:] != run[:-1]])
    ends = np.r_[starts[1:], len(run)]
    keys = frame.select(group)[starts.tolist()].rows()
    return {tuple(k): values[a:b] for k, a, b in zip(keys, starts, ends, strict=True)}


def patterns(
    frame: pl.DataFrame, group: list[str], columns: list[str]
) -> dict[tuple[str, ...], Patterns]:
    """The distinct contribution patterns of each group and how often each occurs.

    Returned as ``(values, weights)`` in a fixed order, so a seeded bootstrap repeats exactly.
    """
    counted = frame.group_by([*group, *columns]).len().sort([*group, *columns])
    arrays = by_group(counted, group, [*columns, "len"])
    return {k: (a[:, :-1], a[:, -1]) for k, a in arrays.items()}


def with_zeros(
    drawn: dict[tuple[str, ...], Patterns], missing: Mapping[tuple[str, ...], int]
) -> dict[tuple[str, ...], Patterns]:
    """Add ``missing[group]`` units that contribute nothing to each group's patterns.

    They are merged into an all-zero pattern where there is one.
    """
    out = dict(drawn)
    for key, extra in missing.items():
        if extra <= 0 or key not in out:
            continue
        values, weights = out[key]
        zero = np.flatnonzero(~values.any(axis=1))
        if zero.size:
            weights = weights.copy()
            weights[zero[0]] += extra
        else:
            values = np.vstack([np.zeros((1, values.shape[1])), values])
            weights = np.concatenate([[float(extra)], weights])
        out[key] = (values, weights)
    return out


def pool_continuous(
    items: pl.LazyFrame, column: str, by: list[str], count: str | None = None
) -> pl.LazyFrame:
    """Replace a continuous column by its quantile-bin mean within each group ``by``.

    ``BINS`` bins per group. With ``count`` (the count the column sums over) a bin never mixes units
    with different counts: each count's units are binned apart, the group's ``BINS`` bins shared
    among the counts by their number of units.
    """
    within = [*by, count] if count else by
    rank = pl.col(column).rank("ordinal").over(within) - 1
    size = pl.len().over(within)
    bins = (BINS * size / pl.len().over(by)).ceil().cast(pl.Int64)
    bin_ = (rank * bins // size).alias("_bin")
    return (
        items.with_columns(bin_)
        .with_columns(pl.col(column).mean().over([*within, "_bin"]))
        .drop("_bin")
    )


def safe_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Elementwise num / den, NaN where the denominator is not positive."""
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
    return out


def ratio(num: int, den: int) -> Stat:
    """sum[num] / sum[den], NaN when the denominator is 0."""

    def f(s: np.ndarray) -> np.ndarray:
        return safe_ratio(s[..., num], s[..., den])

    return f


def difference(stat: Stat, k: int) -> Stat:
    """stat(first k sums) − stat(the rest).

    One cell's metric minus another's, both read from one stacked pattern so that a resample draws
    the same documents for both.
    """

    def f(s: np.ndarray) -> np.ndarray:
        return stat(s[..., :k]) - stat(s[..., k:])

    return f
