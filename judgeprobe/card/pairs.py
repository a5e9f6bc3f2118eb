"""The card's per-pair tables.

Each cue judgment beside its Blind twin, whether its explanation acknowledges the cue, and each
Blind item judged in both orders.

The move flags follow ``metrics.units.paired_units`` (a valid pair = same judge, protocol,
document, item, order and seed, both valid): LDS into the cue's target, TS into Tie, OLS
into the other candidate. A test holds the counts equal to the estimates table's.
"""

from __future__ import annotations

import polars as pl

from judgeprobe.metrics.units import BLIND, CELL, DOC, PAIR, acknowledges, with_optional
from judgeprobe.text.lexicons import Lexicons

V, T = pl.col("verdict"), pl.col("target")
VALID = V != "Invalid"
MOVES = ["lds", "ts", "ols", "silent"]


def _other(target: pl.Expr) -> pl.Expr:
    return pl.when(target == "A").then(pl.lit("B")).when(target == "B").then(pl.lit("A"))


def cue_pairs(judgments: pl.DataFrame | pl.LazyFrame, lex: Lexicons) -> pl.DataFrame:
    """One row per valid (cue judgment, Blind twin) pair of a directional cell.

    Every target A or B, with ``lds``/``ts``/``ols`` (0/1) and ``silent`` (an LDS move whose
    explanation never names the cue).
    """
    j = with_optional(judgments.lazy()).with_columns(pl.col(DOC).cast(pl.String))
    cols = set(j.collect_schema().names())
    j = j.with_columns(pl.lit("").alias(c) for c in ("details",) if c not in cols)
    probe = j.filter(pl.col("condition") != BLIND).filter(
        T.is_in(["A", "B"]).all().over(CELL)  # directional cells only
    )
    blind = j.filter((pl.col("condition") == BLIND) & VALID).select(*PAIR, v_B=V)
    vb, opp = pl.col("v_B"), _other(T)
    return (
        probe.filter(VALID)
        .join(blind, on=PAIR, how="inner")
        .with_columns(
            lds=((V == T) & (vb != T)).cast(pl.Int64),
            ts=((V == "Tie") & (vb != "Tie")).cast(pl.Int64),
            ols=((opp == V) & (vb != opp)).cast(pl.Int64),
        )
        .with_columns(silent=((pl.col("lds") == 1) & ~acknowledges(lex)).cast(pl.Int64))
        .select(*CELL, *PAIR[2:], "target", "verdict", "v_B", *MOVES, "explanation")
        .sort([*CELL, *PAIR[2:]])
        .collect()
    )


def position_pairs(judgments: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """Blind items judged validly in both orders (per judge, protocol, item and seed).

    ``first`` = the first-shown summary chosen both times (A under 12, B under 21), ``second`` = the
    second-shown both times, ``consistent`` = the same verdict.
    """
    j = with_optional(judgments.lazy()).with_columns(pl.col(DOC).cast(pl.String))
    keys = [k for k in PAIR if k != "order"]
    blind = j.filter((pl.col("condition") == BLIND) & VALID)
    v12 = blind.filter(pl.col("order") == "12").select(*keys, v12=V)
    v21 = blind.filter(pl.col("order") == "21").select(*keys, v21=V)
    a, b = pl.col("v12"), pl.col("v21")
    return (
        v12.join(v21, on=keys, how="inner")
        .with_columns(
            first=((a == "A") & (b == "B")).cast(pl.Int64),
            second=((a == "B") & (b == "A")).cast(pl.Int64),
            consistent=(a == b).cast(pl.Int64),
            one=pl.lit(1, dtype=pl.Int64),
        )
        .sort(keys)
        .collect()
    )
