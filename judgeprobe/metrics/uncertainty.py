"""95% intervals of the metrics: score-type bounds that keep their promise, and the bootstrap.

Every rate here is a function of a few sums over the units of one cell (EDR = Σtie / Σvalid,
LAO = Σlds / Σchanged, SENS = (Σintact − Σworse) / Σjudged, …). Items built from one document
are not independent, so the unit of uncertainty is the document (docs/metrics.md): each
interval is computed from the documents' *summed* contributions (``patterns``: the distinct
document sums and how many documents have each).

The metrics' interval (``interval``, method ``score``; the evidence is docs/coverage.md):

- a share Σnum / Σden (``Share``) gets the Korn–Graubard interval: Clopper–Pearson bounds
  at the effective sample size Σden / deff, the design effect deff estimated from the document
  sums by linearisation (at least 1, widened by (t_{D−1} / z)² when documents hold several
  units). With one unit per document it is the exact Clopper–Pearson interval, so an observed
  0 of n has an upper bound above 0 and an observed n of n a lower bound below 1;
- a difference or other signed combination of shares (``Linear``: SENS, first-shown excess,
  paired differences) gets the MOVER interval (Zou & Donner; Newcombe's method 10 for paired
  data is its Wilson case) from each share's bounds and their correlation over documents. A
  share whose numerator is signed (a per-document difference of two counts) is the
  difference of its positive and negative parts;
- an absolute value (``Folded``: ND) folds its inner combination's interval.

``ci_flag`` marks an interval where the simulation found no method that keeps the promise.

The percentile bootstrap over documents (``resampled``, ``percentile``; method
``percentile``) is kept for statistics that are not sums of counts (κ, the rubric classifier's
scores) and to measure what the metrics used before. It draws multinomial counts over the
distinct document patterns, the same distribution as resampling the documents themselves.
Continuous contributions (explanation drift) are pooled into ``BINS`` quantile bins for it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal, TypeVar

import numpy as np
import polars as pl
from scipy.special import betaincinv, ndtri, stdtrit
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
Method = Literal["score", "percentile"]
"""How an interval is computed: ``score`` (the metrics') or the percentile bootstrap."""
SCORE: Method = "score"
PERCENTILE: Method = "percentile"
METHOD_WORDS: dict[Method, str] = {
    SCORE: "score-type, Korn–Graubard for shares and MOVER for differences (docs/coverage.md)",
    PERCENTILE: "the percentile bootstrap",
}
"""Each method in the words a page prints (``method_sentence``)."""
TAIL = (1 - LEVEL) / 2
Z = float(ndtri(1 - TAIL))


def method_sentence(method: Method) -> str:
    """What a page says of intervals computed by ``method``: the words follow the code."""
    return f"95% intervals over documents (a document's items together): {METHOD_WORDS[method]}"


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


def unit_interval(
    items: pl.DataFrame,
    columns: list[str],
    stat: Stat,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    by: str | None = None,
    method: Method = SCORE,
) -> Interval:
    """The 95% interval (``interval``) of ``stat`` of the summed ``columns`` over ``units``' units.

    Units as in ``unit_patterns``; ``resamples`` and ``seed`` serve the percentile bootstrap.
    """
    return interval(*unit_patterns(items, columns, by), stat, method, resamples, seed)


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


@dataclass(frozen=True)
class Share:
    """sum[num] / sum[den], NaN when the denominator is 0: a share of units (or a mean)."""

    num: int
    den: int

    def __call__(self, s: np.ndarray) -> np.ndarray:
        """The share of sums ``s`` (shape (..., k))."""
        return safe_ratio(s[..., self.num], s[..., self.den])

    def shifted(self, k: int) -> Share:
        """The same share of columns ``k`` places later (the second arm of a stacked pattern)."""
        return Share(self.num + k, self.den + k)


@dataclass(frozen=True)
class Signed(Share):
    """sum[num] / sum[den] where a unit's num may be negative (a net count, in [−1, 1])."""

    def shifted(self, k: int) -> Signed:
        """The same share of columns ``k`` places later."""
        return Signed(self.num + k, self.den + k)


@dataclass(frozen=True)
class Linear:
    """Σ coef · share: a difference of shares (SENS, first-shown excess, paired differences)."""

    terms: tuple[tuple[float, Share], ...]

    def __call__(self, s: np.ndarray) -> np.ndarray:
        """The combination of sums ``s``."""
        out: np.ndarray = sum(c * share(s) for c, share in self.terms)  # type: ignore[assignment]
        return out

    def shifted(self, k: int) -> Linear:
        """The same combination of columns ``k`` places later."""
        return Linear(tuple((c, share.shifted(k)) for c, share in self.terms))


@dataclass(frozen=True)
class Folded:
    """|a linear combination of shares| (ND = |A − B| / valid)."""

    inner: Linear

    def __call__(self, s: np.ndarray) -> np.ndarray:
        """|inner| of sums ``s``."""
        folded: np.ndarray = np.abs(self.inner(s))
        return folded

    def shifted(self, k: int) -> Folded:
        """The same fold of columns ``k`` places later."""
        return Folded(self.inner.shifted(k))


@dataclass(frozen=True)
class EstimatorDifference:
    """first − second, two estimators of any kind (a metric of one cell minus another's)."""

    first: Estimator
    second: Estimator

    def __call__(self, s: np.ndarray) -> np.ndarray:
        """First − second of sums ``s``."""
        out: np.ndarray = self.first(s) - self.second(s)
        return out

    def shifted(self, k: int) -> EstimatorDifference:
        """The same difference of columns ``k`` places later."""
        return EstimatorDifference(self.first.shifted(k), self.second.shifted(k))


Estimator = Share | Linear | Folded | EstimatorDifference
"""A statistic with a score interval: what every metric of the table is."""


def ratio(num: int, den: int) -> Share:
    """sum[num] / sum[den], NaN when the denominator is 0."""
    return Share(num, den)


def contrast(plus: int, minus: int, den: int) -> Linear:
    """(sum[plus] − sum[minus]) / sum[den]: a signed share in [−1, 1]."""
    return Linear(((1.0, Share(plus, den)), (-1.0, Share(minus, den))))


def versus(first: Estimator, second: Estimator, k: int) -> Estimator:
    """first(first k sums) − second(the rest): two estimators on one stacked pattern.

    A difference of linear combinations stays linear, so MOVER sees every share's correlation;
    any other pair is an ``EstimatorDifference``. ``second`` may differ from ``first`` (two
    runs' rows with different formulas: LDS − Placebo in one, LDS − OLS in the other).
    """
    if isinstance(first, Share | Linear) and isinstance(second, Share | Linear):
        one = Linear(((1.0, first),)) if isinstance(first, Share) else first
        two = Linear(((1.0, second),)) if isinstance(second, Share) else second
        negated = tuple((-c, share) for c, share in two.shifted(k).terms)
        return Linear(one.terms + negated)
    return EstimatorDifference(first, second.shifted(k))


def difference(stat: Stat, k: int) -> Stat:
    """stat(first k sums) − stat(the rest).

    One cell's metric minus another's, both read from one stacked pattern so that both arms are
    measured on the same documents (``versus``).
    """
    if isinstance(stat, Share | Linear | Folded | EstimatorDifference):
        return versus(stat, stat, k)

    def f(s: np.ndarray) -> np.ndarray:
        return stat(s[..., :k]) - stat(s[..., k:])

    return f


# ------------------------------------------------------------------ score intervals


@dataclass(frozen=True)
class _Part:
    """One estimator on one group's documents: value, bounds, per-document influence."""

    value: float
    lo: float
    hi: float
    influence: np.ndarray  # each pattern's linearised contribution to the estimate's error


_UNDEFINED = _Part(float("nan"), float("nan"), float("nan"), np.empty(0))


def _covariance(a: np.ndarray, b: np.ndarray, weights: np.ndarray) -> float:
    documents = weights.sum()
    scale = documents / (documents - 1) if documents > 1 else 1.0
    return float((weights * a * b).sum() * scale)


def _share_part(
    y: np.ndarray, x: np.ndarray, weights: np.ndarray, *, signed: bool = False
) -> _Part:
    """Korn–Graubard bounds of Σy / Σx over documents (module docstring).

    ``signed`` (or a negative document sum): the positive part minus the negative part.
    """
    total = float((weights * x).sum())
    if total <= 0:
        return _UNDEFINED
    if signed or (y < 0).any():
        plus = _share_part(np.maximum(y, 0), x, weights)
        minus = _share_part(np.maximum(-y, 0), x, weights)
        return _combine([(1.0, plus), (-1.0, minus)], weights)
    value = min(1.0, max(0.0, float((weights * y).sum()) / total))
    influence = (y - value * x) / total
    binomial = value * (1 - value) / total
    documents = float(weights[x > 0].sum())  # the documents that hold a unit of the share
    if binomial <= 0:  # 0 or all of n: no spread to estimate deff from; a document counts once
        deff = max(1.0, total / documents)
    else:
        deff = max(1.0, _covariance(influence, influence, weights) / binomial)
        if total > documents > 1:  # several units to a document: deff's own error, via t
            deff *= (float(stdtrit(documents - 1, 1 - TAIL)) / Z) ** 2
    n = total / deff
    k = value * n
    # Clopper–Pearson: the Beta quantiles (scipy.special: scipy.stats' ppf costs milliseconds).
    lo = float(betaincinv(k, n - k + 1, TAIL)) if k > 0 else 0.0
    hi = float(betaincinv(k + 1, n - k, 1 - TAIL)) if k < n else 1.0
    return _Part(value, lo, hi, influence)


def _combine(parts: Sequence[tuple[float, _Part]], weights: np.ndarray) -> _Part:
    """MOVER: the bounds of Σ coef · part from each part's bounds and their correlations."""
    if any(np.isnan(p.value) for _, p in parts):
        return _UNDEFINED
    value = sum(c * p.value for c, p in parts)
    # Distances from each term's estimate to the bound that moves the sum down (up).
    down = [c * (p.value - p.lo) if c > 0 else -c * (p.hi - p.value) for c, p in parts]
    up = [c * (p.hi - p.value) if c > 0 else -c * (p.value - p.lo) for c, p in parts]
    var = [_covariance(p.influence, p.influence, weights) for _, p in parts]
    lower, upper = sum(d * d for d in down), sum(u * u for u in up)
    for i in range(len(parts)):
        for j in range(i + 1, len(parts)):
            if var[i] <= 0 or var[j] <= 0:
                continue
            cov = _covariance(parts[i][1].influence, parts[j][1].influence, weights)
            r = float(np.sign(parts[i][0] * parts[j][0])) * cov / np.sqrt(var[i] * var[j])
            lower += 2 * r * down[i] * down[j]
            upper += 2 * r * up[i] * up[j]
    floor = sum(c for c, _ in parts if c < 0)
    ceiling = sum(c for c, _ in parts if c > 0)
    lo = max(floor, value - float(np.sqrt(max(lower, 0.0))))
    hi = min(ceiling, value + float(np.sqrt(max(upper, 0.0))))
    influence = sum(c * p.influence for c, p in parts)
    return _Part(value, lo, hi, np.asarray(influence, dtype=np.float64))


def _part(stat: Estimator, values: np.ndarray, weights: np.ndarray) -> _Part:
    if isinstance(stat, Share):
        y, x = values[:, stat.num], values[:, stat.den]
        return _share_part(y, x, weights, signed=isinstance(stat, Signed))
    if isinstance(stat, Linear):
        terms = [(c, _part(share, values, weights)) for c, share in stat.terms]
        return terms[0][1] if len(terms) == 1 and terms[0][0] == 1 else _combine(terms, weights)
    if isinstance(stat, EstimatorDifference):
        first, second = _part(stat.first, values, weights), _part(stat.second, values, weights)
        pair = [(1.0, first), (-1.0, second)]
        got = _combine(pair, weights)
        return _Part(got.value, max(-1.0, got.lo), min(1.0, got.hi), got.influence)
    inner = _part(stat.inner, values, weights)
    if np.isnan(inner.value):
        return _UNDEFINED
    sign = 1.0 if inner.value >= 0 else -1.0
    if inner.lo <= 0 <= inner.hi:
        lo, hi = 0.0, max(-inner.lo, inner.hi)
    else:
        lo, hi = sorted((abs(inner.lo), abs(inner.hi)))
    return _Part(abs(inner.value), lo, hi, sign * inner.influence)


def score_interval(values: np.ndarray, weights: np.ndarray, stat: Estimator) -> Interval:
    """The 95% score interval of ``stat`` over documents with sums ``values`` (module docstring).

    ``values`` are the distinct document sums (rows), ``weights`` how many documents have each.
    """
    if not len(weights) or weights.sum() == 0:
        return float("nan"), float("nan")
    got = _part(stat, np.asarray(values, dtype=np.float64), np.asarray(weights, np.float64))
    return got.lo, got.hi


def interval(
    values: np.ndarray,
    weights: np.ndarray,
    stat: Stat,
    method: Method = SCORE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """The 95% interval of ``stat`` over documents: the one entry point of the metrics.

    ``score`` for every ``Estimator``; the percentile bootstrap (``resamples``, ``seed``) for
    ``method="percentile"`` or a statistic that is not an estimator.
    """
    if method == SCORE and isinstance(stat, Share | Linear | Folded | EstimatorDifference):
        return score_interval(values, weights, stat)
    return percentile_interval(values, weights, stat, resamples, seed)


UNVERIFIED = "unverified"
"""The ``ci_flag`` of an interval the coverage simulation does not vouch for (the bootstrap)."""


def ci_flag(
    values: np.ndarray, weights: np.ndarray, stat: Stat, method: Method = SCORE
) -> str | None:
    """Why an interval may not keep its 95% promise (docs/coverage.md), None where it does.

    The coverage simulation finds the score interval of every estimator holding at every size,
    value and clustering it measured, so only the percentile bootstrap, which fails at small n
    and for rare events, is flagged. ``values`` and ``weights`` are the documents' patterns, for
    a rule that depends on them.
    """
    del values, weights
    if method == SCORE and isinstance(stat, Share | Linear | Folded | EstimatorDifference):
        return None
    return UNVERIFIED
