"""SENS: does the judge prefer a candidate to its degraded copy? (docs/metrics.md, SENS).

A sensitivity judgment shows a candidate beside a copy of itself that is worse in exactly one
fact (``text.degrade``); ``degraded`` names the candidate that is the copy. Per unit (judge,
protocol, condition, document, item, order, seed): ``judged`` valid verdicts (ties kept),
``intact`` verdicts for the original, ``worse`` verdicts for the copy, so that

    SENS = (Σintact − Σworse) / Σjudged  ∈ [−1, 1]

A judge that reads has SENS near 1; one that always picks a position or always says Tie has
SENS near 0 (the copy's side is drawn per item); one that prefers errors has SENS < 0. Each
kind of degradation is its own condition; the pooled cell ``POOLED`` sums every kind of a
judge and protocol, a unit holding all of its item's kinds. The registry gives SENS its
document-level interval and the exact sign test over documents of intact against worse.
"""

from __future__ import annotations

import polars as pl

from judgeprobe.metrics.uncertainty import contrast
from judgeprobe.metrics.units import DEGRADED, KEYS, VALID

POOLED = "Degraded"
"""The condition name of the pooled sensitivity cell (every kind of degradation)."""
COLUMNS = ("intact", "worse", "judged")


SENS = contrast(0, 1, 2)
"""(Σintact − Σworse) / Σjudged over sums with columns ``COLUMNS``; NaN when none judged."""


def sensitivity_units(j: pl.LazyFrame) -> pl.LazyFrame:
    """Per unit: verdicts for the intact candidate, for its degraded copy, and valid ones.

    Each kind's cells, then the pooled cell of every judge and protocol.
    """
    verdict, worse = pl.col("verdict"), pl.col("degraded")
    intact = pl.when(worse == "A").then(pl.lit("B")).otherwise(pl.lit("A"))
    counts = {
        "intact": (VALID & (verdict == intact)).sum().cast(pl.Int64),
        "worse": (VALID & (verdict == worse)).sum().cast(pl.Int64),
        "judged": VALID.sum().cast(pl.Int64),
    }
    degraded = j.filter(DEGRADED)
    per_kind = degraded.group_by(KEYS).agg(**counts)
    pooled = (
        degraded.with_columns(condition=pl.lit(POOLED).cast(pl.Categorical))
        .group_by(KEYS)
        .agg(**counts)
    )
    return pl.concat([per_kind, pooled], how="vertical_relaxed")
