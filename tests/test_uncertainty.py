"""Intervals: score bounds that keep their promise at the edges, the bootstrap deterministic
with a seed and exact in its pooling, the document as the unit; the exact sign test."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
import pytest

from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.metrics.resample import Draw, Key, Totals, document_sums
from judgeprobe.metrics.uncertainty import (
    Folded,
    Linear,
    Share,
    Signed,
    ci_flag,
    contrast,
    interval,
    percentile_intervals,
    ratio,
    sign_test_p,
    sign_test_ps,
    unit_interval,
)
from judgeprobe.text.lexicons import load_lexicons


def _binary(k: int, n: int) -> pl.DataFrame:
    return pl.DataFrame({"x": [1] * k + [0] * (n - k), "one": [1] * n})


def test_same_seed_same_interval_other_seed_other_draws() -> None:
    x = np.random.default_rng(3).integers(0, 100, size=300)
    items = pl.DataFrame({"x": x, "one": np.ones(300, dtype=np.int64)})

    def boot(frame: pl.DataFrame, seed: int) -> tuple[float, float]:
        return unit_interval(frame, ["x", "one"], ratio(0, 1), 2000, seed, method="percentile")

    a = boot(items, 7)
    # Same seed, rows in another order: identical (patterns are put in a fixed order).
    assert a == boot(items.reverse(), 7)
    assert a != boot(items, 8)
    assert a[0] < x.mean() < a[1]


def test_pooling_identical_items_matches_resampling_items() -> None:
    # The pooled multinomial draw must match naive item resampling in distribution.
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, size=60)
    items = pl.DataFrame({"x": x, "one": np.ones(60, dtype=np.int64)})
    lo, hi = unit_interval(items, ["x", "one"], ratio(0, 1), 20_000, seed=1, method="percentile")
    naive = x[rng.integers(0, 60, size=(20_000, 60))].mean(axis=1)
    n_lo, n_hi = np.percentile(naive, [2.5, 97.5])
    assert abs(lo - n_lo) < 0.03
    assert abs(hi - n_hi) < 0.03


def test_coverage_of_a_known_proportion() -> None:
    # 400 simulated studies of n = 150 items with p = 0.3: ~95% of intervals cover p.
    rng = np.random.default_rng(2024)
    covered = 0
    for study in range(400):
        k = int(rng.binomial(150, 0.3))
        lo, hi = unit_interval(_binary(k, 150), ["x", "one"], ratio(0, 1), 1000, seed=study)
        covered += lo <= 0.3 <= hi
    assert 0.92 <= covered / 400 <= 0.98


def test_undefined_resamples_and_empty_input() -> None:
    items = pl.DataFrame({"x": [0, 0], "one": [0, 0]})
    lo, hi = unit_interval(items, ["x", "one"], ratio(0, 1), 100)
    assert np.isnan(lo)
    assert np.isnan(hi)
    assert np.isnan(unit_interval(items.head(0), ["x", "one"], ratio(0, 1), 100)[0])


def test_all_or_none_of_n_gets_a_clopper_pearson_interval_not_a_point() -> None:
    # The percentile bootstrap collapses to a point here; the exact bounds do not.
    lo, hi = unit_interval(_binary(0, 10), ["x", "one"], ratio(0, 1))
    assert lo == 0.0
    assert hi == pytest.approx(1 - 0.025 ** (1 / 10))  # Clopper–Pearson: 0.308
    lo, hi = unit_interval(_binary(10, 10), ["x", "one"], ratio(0, 1))
    assert lo == pytest.approx(0.025 ** (1 / 10))
    assert hi == 1.0
    assert unit_interval(_binary(1, 1), ["x", "one"], ratio(0, 1), method="percentile") == (
        1.0,
        1.0,
    )


# Cluster bootstrap by document ------------------------------------------------------------


def _blind_table(documents: list[str], verdicts: list[str]) -> pl.DataFrame:
    """Blind judgments of one cell, one item each, in the given documents."""
    n = len(verdicts)
    return pl.DataFrame(
        {
            "judge": ["j"] * n,
            "protocol": ["baseline"] * n,
            "condition": ["Blind"] * n,
            "subset": ["s"] * n,
            "item_id": [f"i{k}" for k in range(n)],
            "document_id": documents,
            "order": ["12"] * n,
            "seed": [0] * n,
            "verdict": verdicts,
            "target": ["none"] * n,
        }
    )


def _edr(frame: pl.DataFrame, resamples: int = 4000) -> dict[str, Any]:
    tidy = compute_metrics(frame, load_lexicons(), None, resamples, seed=5, differences=False)
    return tidy.filter(pl.col("metric") == "EDR").row(0, named=True)


def test_correlated_items_in_one_document_widen_the_interval() -> None:
    # 50 documents of 4 items each; all items of a document get the same verdict (perfectly
    # correlated): 20 documents all Tie, 30 all A. The same 200 verdicts as 200 documents of
    # one item are 200 independent draws and must give a narrower interval.
    verdicts = ["Tie"] * 80 + ["A"] * 120
    clustered = _edr(_blind_table([f"d{k // 4}" for k in range(200)], verdicts))
    single = _edr(_blind_table([f"d{k}" for k in range(200)], verdicts))
    assert clustered["value"] == single["value"] == 0.4
    assert (clustered["n"], clustered["documents"]) == (200, 50)
    assert (single["n"], single["documents"]) == (200, 200)
    width = {k: r["hi"] - r["lo"] for k, r in (("clustered", clustered), ("single", single))}
    # Four perfectly correlated items carry one document's information: about twice as wide.
    assert width["clustered"] > 1.6 * width["single"]


def test_one_item_per_document_is_the_item_bootstrap() -> None:
    verdicts = list(np.random.default_rng(4).choice(["A", "B", "Tie"], size=150))
    per_item = _blind_table([f"d{k}" for k in range(150)], verdicts)
    # An old table without document_id resamples items: exactly the same draws.
    assert _edr(per_item) == _edr(per_item.drop("document_id"))
    # And the item-level interval of the same counts is the same.
    items = per_item.with_columns(
        tie=(pl.col("verdict") == "Tie").cast(pl.Int64), one=pl.lit(1, pl.Int64)
    )
    lo, hi = unit_interval(items, ["tie", "one"], ratio(0, 1))
    got = _edr(per_item, 20_000)
    assert (got["lo"], got["hi"]) == pytest.approx((lo, hi), abs=1e-12)


def test_unit_interval_by_document() -> None:
    items = _binary(30, 90).with_columns(doc=pl.Series([f"d{k}" for k in range(90)]))
    # One row per document: grouping by it changes nothing, draw for draw.
    assert unit_interval(items, ["x", "one"], ratio(0, 1), 3000, seed=2, by="doc") == (
        unit_interval(items, ["x", "one"], ratio(0, 1), 3000, seed=2)
    )
    # Three rows per document, perfectly correlated: wider.
    clustered = _binary(30, 90).with_columns(doc=pl.Series([f"d{k // 3}" for k in range(90)]))
    c_lo, c_hi = unit_interval(clustered, ["x", "one"], ratio(0, 1), 3000, seed=2, by="doc")
    i_lo, i_hi = unit_interval(clustered, ["x", "one"], ratio(0, 1), 3000, seed=2)
    assert c_hi - c_lo > 1.4 * (i_hi - i_lo)


def test_shared_draw_matches_separate_draws_in_distribution() -> None:
    # Several metrics of one cell read from one draw over the union of their columns must
    # give the intervals their own draws give (up to Monte Carlo error).
    rng = np.random.default_rng(9)
    v = rng.choice([0, 1, 2], size=400, p=[0.5, 0.3, 0.2])  # Tie / A / B
    units = pl.DataFrame({"tie": v == 0, "a": v == 1, "valid": np.ones(400, bool)}).cast(pl.Int64)
    union = units.group_by(["tie", "a", "valid"]).len().sort(["tie", "a", "valid"])
    values = union.select("tie", "a", "valid").to_numpy().astype(np.float64)
    weights = union["len"].to_numpy()
    stats = {"edr": ratio(0, 2), "share_a": ratio(1, 2)}
    shared = percentile_intervals(values, weights, stats, 20_000, seed=3)
    for name, cols in (("edr", ["tie", "valid"]), ("share_a", ["a", "valid"])):
        alone = unit_interval(units, cols, ratio(0, 1), 20_000, seed=4, method="percentile")
        assert shared[name] == pytest.approx(alone, abs=0.012)


def test_document_sums_total_each_group_and_draw_idle_documents_as_zeros() -> None:
    units = pl.DataFrame(
        {
            "cell": ["x", "x", "x", "x", "y", "y"],
            "document_id": ["a", "a", "b", "c", "a", "b"],
            "k": [1, 0, 1, 1, 0, 1],
            "m": [1, 1, 1, 1, 1, 1],
        }
    )
    judged: dict[Key, int] = {("x",): 5, ("y",): 2}  # x: two more documents, adding no unit
    sums = document_sums(units, ["cell"], ["k", "m"], count=pl.len(), judged=judged)
    assert sums.totals[("x",)] == Totals({"k": 3.0, "m": 4.0}, n=4, documents=3)
    assert sums.idle == {("x",): 2, ("y",): 0}
    drawing = sums.resampling({"share": Draw(("k", "m"), ratio(0, 1))}, ["k", "m"])
    values, weights = drawing.separate["share"][("x",)]
    got = sorted(zip(map(tuple, values.tolist()), weights.tolist(), strict=True))
    assert got == [((0.0, 0.0), 2), ((1.0, 1.0), 2), ((1.0, 2.0), 1)]  # idle, b and c, a
    lo, hi = drawing.intervals(("x",), ["share"], 2000, seed=0)["share"]
    assert lo <= 3 / 4 <= hi


# Score intervals of signed and folded combinations ------------------------------------------


def _patterns(rows: Sequence[tuple[float, ...]]) -> tuple[np.ndarray, np.ndarray]:
    values, weights = np.unique(np.array(rows, dtype=np.float64), axis=0, return_counts=True)
    return values, weights


def test_a_signed_share_with_only_positive_documents_can_still_reach_below_zero() -> None:
    # 1 of 30 documents moved one way, none the other: the net effect may well be 0 or less.
    values, weights = _patterns([(1.0, 1.0)] + [(0.0, 1.0)] * 29)
    lo, hi = interval(values, weights, Signed(0, 1))
    assert lo < 0 < 1 / 30 < hi
    # Read as a plain share the same counts exclude 0: a share cannot be negative.
    assert interval(values, weights, ratio(0, 1))[0] > 0


def test_contrast_and_fold_of_no_difference() -> None:
    # 10 documents, all Tie: SENS 0 and ND 0, each with an interval of positive width.
    values, weights = _patterns([(0.0, 0.0, 1.0)] * 10)
    lo, hi = interval(values, weights, contrast(0, 1, 2))
    assert lo < 0 < hi
    assert lo == pytest.approx(-hi)
    f_lo, f_hi = interval(values, weights, Folded(contrast(0, 1, 2)))
    assert f_lo == 0.0
    assert f_hi == pytest.approx(hi)


def test_mover_reduces_to_the_share_for_one_term_and_stays_in_range() -> None:
    values, weights = _patterns([(1.0, 0.0, 1.0)] * 9 + [(0.0, 1.0, 1.0)])
    lo, hi = interval(values, weights, contrast(0, 1, 2))
    assert -1 <= lo < 0.8 < hi <= 1
    assert interval(values, weights, Linear(((1.0, Share(0, 2)),))) == interval(
        values, weights, Share(0, 2)
    )


def test_clustered_documents_with_nothing_observed_count_once_each() -> None:
    # 0 of 40 units in 10 documents of 4: without spread to estimate the design effect from,
    # each document counts once (an upper bound of 0 of 10, not of 40).
    values, weights = _patterns([(0.0, 4.0)] * 10)
    assert interval(values, weights, ratio(0, 1))[1] == pytest.approx(1 - 0.025 ** (1 / 10))
    values, weights = _patterns([(0.0, 1.0)] * 10)
    assert interval(values, weights, ratio(0, 1))[1] == pytest.approx(1 - 0.025 ** (1 / 10))


def test_only_the_bootstrap_is_flagged_unverified() -> None:
    values, weights = _patterns([(1.0, 1.0)] * 3 + [(0.0, 1.0)] * 7)
    assert ci_flag(values, weights, ratio(0, 1)) is None
    assert ci_flag(values, weights, ratio(0, 1), method="percentile") == "unverified"


# The exact sign test (McNemar's on discordant units) ---------------------------------------


def test_sign_test_exact_values() -> None:
    assert sign_test_p(0, 0) is None
    assert sign_test_p(5, 5) == 2 / 32
    assert sign_test_p(0, 5) == 2 / 32
    assert sign_test_p(3, 6) == 1.0
    assert sign_test_p(1, 1) == 1.0
    assert sign_test_p(2, 10) == 2 * (1 + 10 + 45) / 1024 == 0.109375
    expected = 2 * sum(math.comb(20, i) for i in range(4)) / 2**20  # 3 of 20
    assert sign_test_p(3, 20) == pytest.approx(expected, rel=1e-15)
    assert sign_test_p(3, 20) == pytest.approx(0.002576828, abs=1e-9)


@pytest.mark.parametrize(("k", "n"), [(470, 1_000), (1_950, 4_000), (40, 100)])
def test_sign_test_large_n_matches_the_exact_sum(k: int, n: int) -> None:
    # The exact tail, summed in big integers: what the library test must reproduce.
    exact = 2 * sum(math.comb(n, i) for i in range(min(k, n - k) + 1)) / 2**n
    assert sign_test_p(k, n) == pytest.approx(min(1.0, exact), rel=1e-9)


def test_vectorised_sign_test_is_binomtest() -> None:
    pairs = [(k, n) for n in range(0, 41) for k in range(n + 1)] + [(4_930, 10_000), (7, 20_000)]
    k, n = (np.array([p[i] for p in pairs]) for i in (0, 1))
    got = sign_test_ps(k, n)
    want = np.array([sign_test_p(a, b) if b else np.nan for a, b in pairs], dtype=float)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=0)
    assert np.isnan(got[0])


@pytest.mark.parametrize("n", [1, 2, 5, 6, 11, 30])
def test_sign_test_symmetric_and_bounded(n: int) -> None:
    for k in range(n + 1):
        p = sign_test_p(k, n)
        assert p is not None
        assert p == sign_test_p(n - k, n)
        assert 0.0 < p <= 1.0
