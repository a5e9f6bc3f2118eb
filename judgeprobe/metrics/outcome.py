"""Outcome metrics per (judge, protocol, condition): Blind behaviour and outcome anchoring.

- EDR = n(Tie)/n and ND = |n(A) − n(B)|/n, over the cell's valid verdicts.
- LDS / TS / OLS: per item paired with Blind (same judge, protocol, item, order, seed, both
  valid), the share whose verdict moved *into* the target / Tie / the other candidate.
- LAO = LDS / (LDS + TS + OLS); null (shown "–") when nothing moved, never 0.
- Marginal forms P_p(x) − P_B(x), each side over its whole cell's valid verdicts, for data
  that cannot be paired; and an exact two-sided sign test of the LDS count against OLS.

A rate with an empty denominator is null, never NaN or 0. Directional metrics (LDS, OLS,
LAO, the sign test) need a cell whose every target is A or B.
"""

from __future__ import annotations

from math import comb

import polars as pl

CELL = ["judge", "protocol", "condition"]
PAIR = ["judge", "protocol", "subset", "item_id", "order", "seed"]
BLIND = "Blind"

REQUIRED = {*CELL, *PAIR, "verdict", "target"}

_V, _T, _VB = pl.col("verdict"), pl.col("target"), pl.col("v_B")
_VALID = _V != "Invalid"
_HAS_TARGET = _T.is_in(["A", "B"])


def _other(target: pl.Expr) -> pl.Expr:
    return pl.when(target == "A").then(pl.lit("B")).when(target == "B").then(pl.lit("A"))


def _ratio(num: str | pl.Expr, den: str | pl.Expr) -> pl.Expr:
    num = pl.col(num) if isinstance(num, str) else num
    den = pl.col(den) if isinstance(den, str) else den
    return pl.when(den > 0).then(num / den)


def blind_behaviour(j: pl.LazyFrame) -> pl.LazyFrame:
    """Counts, invalid rate, EDR, ND and cost per cell."""
    cost = [
        c for c in ("latency_s", "prompt_tokens", "completion_tokens") if c in j.collect_schema()
    ]
    counts = j.group_by(CELL).agg(
        *[pl.col(c).mean().alias(f"mean_{c}") for c in cost],
        n=pl.len().cast(pl.Int64),
        n_valid=_VALID.sum().cast(pl.Int64),
        n_A=(_V == "A").sum().cast(pl.Int64),
        n_B=(_V == "B").sum().cast(pl.Int64),
        n_Tie=(_V == "Tie").sum().cast(pl.Int64),
        directional=_HAS_TARGET.all(),
    )
    return counts.with_columns(
        invalid_rate=_ratio(pl.col("n") - pl.col("n_valid"), "n"),
        EDR=_ratio("n_Tie", "n_valid"),
        ND=_ratio((pl.col("n_A") - pl.col("n_B")).abs(), "n_valid"),
    )


def paired_shifts(j: pl.LazyFrame) -> pl.LazyFrame:
    """LDS/TS/OLS/LAO of each probe cell against Blind, over items valid in both."""
    blind = j.filter((pl.col("condition") == BLIND) & _VALID).select(*PAIR, v_B=_V)
    opp = _other(_T)
    return (
        j.filter((pl.col("condition") != BLIND) & _VALID)
        .join(blind, on=PAIR, how="inner")
        .group_by(CELL)
        .agg(
            n_paired=pl.len().cast(pl.Int64),
            lds_count=((_V == _T) & (_VB != _T)).sum().cast(pl.Int64),
            ts_count=((_V == "Tie") & (_VB != "Tie")).sum().cast(pl.Int64),
            ols_count=((opp == _V) & (opp != _VB)).sum().cast(pl.Int64),
        )
    )


def marginal_shifts(j: pl.LazyFrame) -> pl.LazyFrame:
    """P_p(x) − P_B(x) with each side over its own cell's valid verdicts.

    The Blind side is read with the probe's target for the same item presentation where
    there is one, else the probe cell's target when that is the same for every item.
    """
    probe = j.filter((pl.col("condition") != BLIND) & _VALID)
    opp = _other(_T)
    probe_side = probe.group_by(CELL).agg(
        p_fav=(_V == _T).mean(),
        p_tie=(_V == "Tie").mean(),
        p_opp=(opp == _V).mean(),
        cell_target=pl.when(_T.n_unique() == 1).then(_T.first()),
    )
    item_target = probe.select(*CELL, *PAIR[2:], item_target=_T).unique(CELL + PAIR[2:])
    blind = j.filter((pl.col("condition") == BLIND) & _VALID).select(*PAIR, v_B=_V)
    cells = probe_side.select(*CELL, "cell_target")
    t = pl.coalesce("item_target", "cell_target")
    blind_side = (
        blind.join(cells, on=["judge", "protocol"], how="inner")
        .join(item_target, on=CELL + PAIR[2:], how="left")
        .group_by(CELL)
        .agg(
            b_fav=pl.when(t.is_in(["A", "B"])).then(t == _VB).mean(),
            b_tie=(_VB == "Tie").mean(),
            b_opp=pl.when(t.is_in(["A", "B"])).then(_other(t) == _VB).mean(),
        )
    )
    return probe_side.join(blind_side, on=CELL, how="inner").select(
        *CELL,
        marginal_LDS=pl.col("p_fav") - pl.col("b_fav"),
        marginal_TS=pl.col("p_tie") - pl.col("b_tie"),
        marginal_OLS=pl.col("p_opp") - pl.col("b_opp"),
    )


def sign_test_p(k: int, n: int) -> float | None:
    """Exact two-sided sign test of k successes in n trials at p = 1/2."""
    if n <= 0:
        return None
    tail: float = sum(comb(n, i) for i in range(min(k, n - k) + 1)) / 2**n
    return min(1.0, 2.0 * tail)


def outcome_table(judgments: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """All outcome metrics, one row per (judge, protocol, condition), Blind first."""
    j = judgments.lazy()
    probe = pl.col("condition") != BLIND
    directional = probe & pl.col("directional")
    table = (
        blind_behaviour(j)
        .join(paired_shifts(j), on=CELL, how="left")
        .join(marginal_shifts(j), on=CELL, how="left")
        .with_columns(
            pl.when(probe).then(pl.col(c).fill_null(0)).alias(c) for c in ("n_paired", "ts_count")
        )
        .with_columns(
            pl.when(directional).then(pl.col(c)).alias(c)
            for c in ("lds_count", "ols_count", "marginal_LDS", "marginal_OLS")
        )
        .with_columns(
            LDS=_ratio("lds_count", "n_paired"),
            TS=_ratio("ts_count", "n_paired"),
            OLS=_ratio("ols_count", "n_paired"),
        )
        .with_columns(
            LAO=_ratio("LDS", pl.col("LDS") + pl.col("TS") + pl.col("OLS")),
        )
        .sort(["judge", "protocol", probe, "condition"])
        .drop("directional")
        .collect()
    )
    p_values = [
        None if k is None else sign_test_p(k, k + (o or 0))
        for k, o in zip(table["lds_count"], table["ols_count"], strict=True)
    ]
    return table.with_columns(sign_p=pl.Series(p_values, dtype=pl.Float64))
