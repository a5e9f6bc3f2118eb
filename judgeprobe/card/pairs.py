"""The card's per-pair tables.

Each cue judgment beside its Blind twin, whether its explanation acknowledges the cue, and each
Blind item judged in both orders.

A pair, its move flags, the acknowledgement rule and the items judged in both orders are the
metrics' own (``metrics.units.blind_twins``, ``moves``, ``acknowledges``, ``position_units``): LDS
into the cue's target, TS into Tie, OLS into the other candidate. A test holds the counts equal to
the estimates table's.
"""

from __future__ import annotations

import polars as pl

from judgeprobe.conditions import BLIND, NAMED_BLIND
from judgeprobe.metrics.uncertainty import sign_test_p
from judgeprobe.metrics.units import (
    CELL,
    DOC,
    PAIR,
    PRESSURE,
    SHOWING,
    VALID,
    acknowledges,
    blind_twins,
    moves,
    position_units,
    with_optional,
)
from judgeprobe.text.lexicons import Lexicons

PAIR_FLAGS = ["lds", "ts", "ols", "silent"]
"""A pair's 0/1 columns: moved into the target, into Tie, into the other, silently."""
BLIND_VERDICT = "v_B"  # the Blind twin's verdict, as ``card_silent.csv`` names it


def cue_pairs(judgments: pl.DataFrame | pl.LazyFrame, lex: Lexicons) -> pl.DataFrame:
    """One row per valid (cue judgment, Blind twin) pair of a directional cell.

    Every target A or B, with ``lds``/``ts``/``ols`` (0/1) and ``silent`` (an LDS move whose
    explanation never names the cue).
    """
    j = with_optional(judgments.lazy()).with_columns(pl.col(DOC).cast(pl.String))
    cols = set(j.collect_schema().names())
    j = j.with_columns(pl.lit("").alias(c) for c in ("details",) if c not in cols)
    probe = j.filter((pl.col("condition") != BLIND) & ~PRESSURE).filter(
        pl.col("target").is_in(["A", "B"]).all().over(CELL)  # directional cells only
    )
    blind = pl.col("blind_verdict")
    return (
        probe.filter(VALID)
        .join(blind_twins(j).drop("blind_explanation"), on=PAIR, how="inner")
        .with_columns(**{name: move.cast(pl.Int64) for name, move in moves(blind).items()})
        .with_columns(silent=((pl.col("lds") == 1) & ~acknowledges(lex)).cast(pl.Int64))
        .select(
            *CELL,
            *SHOWING,
            "target",
            "verdict",
            blind.alias(BLIND_VERDICT),
            *PAIR_FLAGS,
            "explanation",
        )
        .sort([*CELL, *SHOWING])
        .collect()
    )


def position_pairs(judgments: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """Blind items judged validly in both orders (``metrics.units.position_units``).

    ``first`` = the first-shown summary chosen both times (A under 12, B under 21), ``second`` = the
    second-shown both times, ``consistent`` = the same verdict; ``unit`` = 1, each row one unit.
    Blind under a further label scheme (``conditions.NAMED_BLIND``) gives units of its own, told
    apart by ``condition``.
    """
    j = with_optional(judgments.lazy()).with_columns(pl.col(DOC).cast(pl.String))
    blind = pl.col("condition").is_in([BLIND, *NAMED_BLIND.values()])
    return (
        position_units(j.filter(blind))
        .drop("order", "swapped")
        .with_columns(unit=pl.lit(1, dtype=pl.Int64))
        .sort(["condition", *(k for k in PAIR if k != "order")])
        .collect()
    )


def direction_test(units: pl.DataFrame, net: pl.Expr | str) -> tuple[int, int, float | None]:
    """Documents whose summed ``net`` is positive against negative, and their exact sign test.

    McNemar's exact test on the discordant documents: a cue row's (toward the target or away),
    the position row's (first-shown both times or second-shown), the sensitivity row's (intact
    preferred or degraded).
    """
    expr = pl.col(net) if isinstance(net, str) else net
    per_doc = units.group_by(DOC).agg(expr.sum().alias("net"))
    up, down = int((per_doc["net"] > 0).sum()), int((per_doc["net"] < 0).sum())
    return up, down, sign_test_p(up, up + down)
