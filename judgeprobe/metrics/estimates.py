"""The estimates table: exact point estimates per (judge, protocol, condition), wide.

Counts come from the same per-item tables as the intervals (``units``), one row per cell, and
each rate is the registry's formula of them (``registry``): EDR, ND, paired LDS/TS/OLS/LAO, the
marginal forms; then the exact sign test of LDS against OLS, and cost. A rate
with an empty denominator is null (shown "–"), never NaN or 0; directional metrics (LDS,
OLS, LAO, marginal LDS/OLS, the sign test) need every target of the cell to be A or B. The
last column, ``flag``, says why a cell cannot be read ('' when it can; see ``metrics.flags``).
"""

from __future__ import annotations

import polars as pl

from judgeprobe.conditions import BLIND
from judgeprobe.metrics.flags import Readability, with_flags
from judgeprobe.metrics.registry import BY_NAME
from judgeprobe.metrics.uncertainty import sign_test_ps
from judgeprobe.metrics.units import (
    CELL,
    DEGRADED,
    DOC,
    PAIR,
    PRESSURE,
    cell_units,
    marginal_units,
    paired_units,
    with_optional,
)

REQUIRED = {*CELL, *PAIR, "verdict", "target"} - {DOC}  # a missing document_id is derived
COUNTS = {"judgments": "n", "valid": "n_valid", "a": "n_A", "b": "n_B", "tie": "n_Tie"}
PAIRED = {"paired": "n_paired", "lds": "lds_count", "ts": "ts_count", "ols": "ols_count"}
"""The per-item counts the table shows, by their column in the table."""
MARGINAL = ("marginal_LDS", "marginal_TS", "marginal_OLS")
RATES = ("invalid_rate", "EDR", "ND", "LDS", "TS", "OLS", "LAO")
"""The registry's metrics the table shows, computed from the cell's sums of their columns."""


def estimates_table(
    judgments: pl.DataFrame | pl.LazyFrame, limits: Readability | None = None
) -> pl.DataFrame:
    """All point estimates, one row per (judge, protocol, condition), Blind first.

    Each is flagged when it cannot be read under ``limits``.
    """
    j = with_optional(judgments.lazy())
    cost = j.group_by(CELL).agg(
        mean_latency_s=pl.col("latency_s").mean(),
        mean_prompt_tokens=pl.col("prompt_tokens").mean(),
        mean_completion_tokens=pl.col("completion_tokens").mean(),
    )
    blind = pl.col("condition") == BLIND
    # A cue cell: a sensitivity cell has no twin, a pressure cell is read by its revisions.
    probe = ~blind & ~pl.col("degraded_pairs") & ~pl.col("pushed")
    directional = probe & pl.col("directional")
    sums = (
        cell_units(j, CELL)
        .join(
            j.group_by(CELL).agg(degraded_pairs=DEGRADED.any(), pushed=PRESSURE.any()),
            on=CELL,
            how="left",
        )
        .join(cost, on=CELL, how="left")
        .join(paired_units(j, CELL), on=CELL, how="left")
        .join(marginal_units(j, CELL), on=CELL, how="left")
        .with_columns(
            pl.when(probe).then(pl.col(c).fill_null(0)).alias(c) for c in ("paired", "ts")
        )
        .with_columns(pl.when(directional).then(pl.col(c)).alias(c) for c in ("lds", "ols"))
        .sort(["judge", "protocol", ~blind, "condition"])
        .collect()
    )
    rates = []
    for name in (*MARGINAL, *RATES):
        spec = BY_NAME[name]
        shown = (
            pl.lit(True) if spec.family == "cell" else directional if spec.directional else probe
        )
        rates.append(pl.when(shown).then(spec.of(sums)).alias(name))
    lds, ols = sums["lds"].fill_null(0), sums["ols"].fill_null(0)
    tested = sums["lds"].is_not_null() & (lds + ols > 0)
    p_values = pl.Series(sign_test_ps(lds.to_numpy(), (lds + ols).to_numpy()), dtype=pl.Float64)
    table = sums.select(
        *CELL,
        *(pl.col(c).alias(name) for c, name in COUNTS.items()),
        "mean_latency_s",
        "mean_prompt_tokens",
        "mean_completion_tokens",
        *(pl.col(c).alias(name) for c, name in PAIRED.items()),
        *rates,
        sign_p=pl.when(tested).then(p_values),
    )
    return with_flags(table, limits)
