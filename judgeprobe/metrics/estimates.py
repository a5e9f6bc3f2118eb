"""The estimates table: exact point estimates per (judge, protocol, condition), wide.

Counts come from the same per-item tables as the bootstrap (``units``): EDR, ND, paired
LDS/TS/OLS/LAO, the marginal forms, the exact sign test of LDS against OLS, and cost. A rate
with an empty denominator is null (shown "–"), never NaN or 0; directional metrics (LDS,
OLS, LAO, marginal LDS/OLS, the sign test) need every target of the cell to be A or B. The
last column, ``flag``, says why a cell cannot be read ('' when it can; see ``metrics.flags``).
"""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy.stats import binom, binomtest

from judgeprobe.metrics.flags import Readability, with_flags
from judgeprobe.metrics.units import (
    BLIND,
    CELL,
    DEGRADED,
    DOC,
    PAIR,
    cell_units,
    marginal_units,
    paired_units,
    with_optional,
)

REQUIRED = {*CELL, *PAIR, "verdict", "target"} - {DOC}  # a missing document_id is derived


def _ratio(num: str | pl.Expr, den: str | pl.Expr) -> pl.Expr:
    num = pl.col(num) if isinstance(num, str) else num
    den = pl.col(den) if isinstance(den, str) else den
    return pl.when(den > 0).then(num / den)


def sign_test_p(k: int, n: int) -> float | None:
    """Exact two-sided sign test of k successes in n trials at p = 1/2; None when n = 0.

    scipy's ``binomtest`` sums the tail in floating point: under a millisecond at any n,
    where summing exact big-integer binomials took seconds per cell at n = 10,000.
    """
    if n <= 0:
        return None
    return float(binomtest(k, n, 0.5).pvalue)


def sign_test_ps(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``sign_test_p`` of many (k, n) at once, NaN where n = 0.

    At p = 1/2 the binomial is symmetric, so binomtest's two-sided p is twice the smaller tail,
    capped at 1.
    """
    k, n = np.asarray(k, dtype=np.int64), np.asarray(n, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        p = np.minimum(1.0, 2.0 * binom.cdf(np.minimum(k, n - k), n, 0.5))
    return np.where(n > 0, p, np.nan)


def estimates_table(
    judgments: pl.DataFrame | pl.LazyFrame, limits: Readability | None = None
) -> pl.DataFrame:
    """All point estimates, one row per (judge, protocol, condition), Blind first.

    Each is flagged when it cannot be read under ``limits``.
    """
    j = with_optional(judgments.lazy())
    counts = (
        cell_units(j, CELL)
        .group_by(CELL)
        .agg(
            n=pl.col("one").sum(),
            n_valid=pl.col("valid").sum(),
            n_A=pl.col("a").sum(),
            n_B=pl.col("b").sum(),
            n_Tie=pl.col("tie").sum(),
            invalid=pl.col("invalid").sum(),
            directional=pl.col("directional").all(),
        )
        .join(j.group_by(CELL).agg(degraded_pairs=DEGRADED.any()), on=CELL, how="left")
    )
    cost = j.group_by(CELL).agg(
        mean_latency_s=pl.col("latency_s").mean(),
        mean_prompt_tokens=pl.col("prompt_tokens").mean(),
        mean_completion_tokens=pl.col("completion_tokens").mean(),
    )
    paired = (
        paired_units(j, CELL)
        .group_by(CELL)
        .agg(
            n_paired=pl.col("paired").sum(),
            lds_count=pl.col("lds").sum(),
            ts_count=pl.col("ts").sum(),
            ols_count=pl.col("ols").sum(),
        )
    )
    m = marginal_units(j, CELL)
    marginal = m.select(
        *CELL,
        marginal_LDS=_ratio("p_fav", "p_valid") - _ratio("b_fav", "b_valid"),
        marginal_TS=_ratio("p_tie", "p_valid") - _ratio("b_tie", "b_valid"),
        marginal_OLS=_ratio("p_opp", "p_valid") - _ratio("b_opp", "b_valid"),
    )
    blind = pl.col("condition") == BLIND
    probe = ~blind & ~pl.col("degraded_pairs")  # a cue cell, paired with Blind
    table = (
        counts.join(cost, on=CELL, how="left")
        .join(paired, on=CELL, how="left")
        .join(marginal, on=CELL, how="left")
        .with_columns(
            invalid_rate=_ratio("invalid", "n"),
            EDR=_ratio("n_Tie", "n_valid"),
            ND=_ratio((pl.col("n_A") - pl.col("n_B")).abs(), "n_valid"),
        )
        .with_columns(
            pl.when(probe).then(pl.col(c).fill_null(0)).alias(c) for c in ("n_paired", "ts_count")
        )
        .with_columns(
            pl.when(probe & pl.col("directional")).then(pl.col(c)).alias(c)
            for c in ("lds_count", "ols_count", "marginal_LDS", "marginal_OLS")
        )
        .with_columns(
            pl.when(probe).then(pl.col("marginal_TS")).alias("marginal_TS"),
            LDS=_ratio("lds_count", "n_paired"),
            TS=_ratio("ts_count", "n_paired"),
            OLS=_ratio("ols_count", "n_paired"),
        )
        .with_columns(LAO=_ratio("LDS", pl.col("LDS") + pl.col("TS") + pl.col("OLS")))
        .sort(["judge", "protocol", ~blind, "condition"])
        .drop("directional", "invalid", "degraded_pairs")
        .collect()
    )
    lds, ols = table["lds_count"].fill_null(0), table["ols_count"].fill_null(0)
    p_values = pl.Series(sign_test_ps(lds.to_numpy(), (lds + ols).to_numpy()), dtype=pl.Float64)
    tested = table["lds_count"].is_not_null() & (lds + ols > 0)
    sign_p = pl.select(pl.when(tested).then(p_values)).to_series()
    return with_flags(table.with_columns(sign_p=sign_p), limits)
