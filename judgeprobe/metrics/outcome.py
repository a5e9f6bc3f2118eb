"""Outcome metrics per (judge, protocol, condition): Blind behaviour and outcome anchoring.

- EDR = n(Tie)/n and ND = |n(A) − n(B)|/n, over the cell's valid verdicts.
- LDS / TS / OLS: per item paired with Blind (same judge, protocol, item, order, seed, both
  valid), the share whose verdict moved *into* the target / Tie / the other candidate.
- LAO = LDS / (LDS + TS + OLS); null (shown "–") when nothing moved, never 0.
- Marginal forms P_p(x) − P_B(x) for data that cannot be paired, and an exact two-sided
  sign test of the LDS count against the OLS count.
"""

from __future__ import annotations

from math import comb

import polars as pl

CELL = ["judge", "protocol", "condition"]
PAIR = ["judge", "protocol", "subset", "item_id", "order", "seed"]
BLIND = "Blind"

REQUIRED = {*CELL, *PAIR, "verdict", "target"}


def _other(target: pl.Expr) -> pl.Expr:
    return pl.when(target == "A").then(pl.lit("B")).when(target == "B").then(pl.lit("A"))


def blind_behaviour(j: pl.LazyFrame) -> pl.LazyFrame:
    """Counts, invalid rate, EDR, ND and cost per cell."""
    valid = pl.col("verdict") != "Invalid"
    n_valid = valid.sum()
    return j.group_by(CELL).agg(
        n=pl.len(),
        n_valid=n_valid,
        n_A=(pl.col("verdict") == "A").sum(),
        n_B=(pl.col("verdict") == "B").sum(),
        n_Tie=(pl.col("verdict") == "Tie").sum(),
        invalid_rate=1 - n_valid / pl.len(),
        EDR=(pl.col("verdict") == "Tie").sum() / n_valid,
        ND=(
            (pl.col("verdict") == "A").sum().cast(pl.Int64)
            - (pl.col("verdict") == "B").sum().cast(pl.Int64)
        ).abs()
        / n_valid,
        mean_latency_s=pl.col("latency_s").mean() if "latency_s" in j.collect_schema() else None,
        mean_prompt_tokens=pl.col("prompt_tokens").mean()
        if "prompt_tokens" in j.collect_schema()
        else None,
        mean_completion_tokens=pl.col("completion_tokens").mean()
        if "completion_tokens" in j.collect_schema()
        else None,
    )


def _with_blind(j: pl.LazyFrame) -> pl.LazyFrame:
    """Probe rows joined with the Blind verdict of the same item presentation."""
    blind = j.filter(pl.col("condition") == BLIND).select(*PAIR, v_B=pl.col("verdict"))
    return j.join(blind, on=PAIR, how="inner").with_columns(opp=_other(pl.col("target")))


def anchoring(j: pl.LazyFrame) -> pl.LazyFrame:
    """Paired LDS/TS/OLS/LAO and the marginal forms, per cell."""
    t, v, vb, opp = pl.col("target"), pl.col("verdict"), pl.col("v_B"), pl.col("opp")
    both_valid = (v != "Invalid") & (vb != "Invalid")
    has_target = t.is_in(["A", "B"])
    joined = _with_blind(j)
    paired = joined.filter(both_valid).group_by(CELL).agg(
        n_paired=pl.len(),
        lds_count=pl.when(has_target).then((v == t) & (vb != t)).sum(),
        ts_count=((v == "Tie") & (vb != "Tie")).sum(),
        ols_count=pl.when(has_target).then((v == opp) & (vb != opp)).sum(),
        directional=has_target.all(),
    )
    lds = pl.col("lds_count") / pl.col("n_paired")
    ts = pl.col("ts_count") / pl.col("n_paired")
    ols = pl.col("ols_count") / pl.col("n_paired")
    moved = lds + ts + ols
    paired = paired.with_columns(
        LDS=pl.when(pl.col("directional")).then(lds),
        TS=ts,
        OLS=pl.when(pl.col("directional")).then(ols),
    ).with_columns(
        LAO=pl.when(pl.col("directional") & (moved > 0)).then(lds / moved),
    )
    # Marginal: each side over its own valid verdicts; the target comes from the probe row.
    probe_valid, blind_valid = v != "Invalid", vb != "Invalid"
    marginal = joined.group_by(CELL).agg(
        marginal_LDS=pl.when(has_target).then(v == t).filter(probe_valid).mean()
        - pl.when(has_target).then(vb == t).filter(blind_valid).mean(),
        marginal_TS=(v == "Tie").filter(probe_valid).mean() - (vb == "Tie").filter(blind_valid).mean(),
        marginal_OLS=pl.when(has_target).then(v == opp).filter(probe_valid).mean()
        - pl.when(has_target).then(vb == opp).filter(blind_valid).mean(),
    )
    return paired.join(marginal, on=CELL, how="full", coalesce=True)


def sign_test_p(k: int, n: int) -> float | None:
    """Exact two-sided sign test of k successes in n trials at p = 1/2."""
    if n <= 0:
        return None
    tail = sum(comb(n, i) for i in range(min(k, n - k) + 1)) / 2**n
    return min(1.0, 2 * tail)


def outcome_table(judgments: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """All outcome metrics, one row per (judge, protocol, condition), Blind first."""
    j = judgments.lazy()
    table = (
        blind_behaviour(j)
        .join(anchoring(j), on=CELL, how="left")
        .with_columns(is_blind=pl.col("condition") != BLIND)
        .sort(["judge", "protocol", "is_blind", "condition"])
        .drop("is_blind", "directional")
        .collect()
    )
    p_values = [
        sign_test_p(int(k or 0), int(k or 0) + int(o or 0)) if k is not None else None
        for k, o in zip(table["lds_count"], table["ols_count"], strict=True)
    ]
    return table.with_columns(sign_p=pl.Series(p_values, dtype=pl.Float64))
