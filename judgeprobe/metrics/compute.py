"""All metrics with 95% bootstrap intervals and the spread across seeds, as one tidy table.

Rows: (judge, protocol, condition, metric) with ``value``, ``lo``, ``hi`` (percentile
bootstrap over items, paired metrics resampling pairs together), ``n`` (items with a
defined contribution), ``seeds`` and ``seed_sd`` (the spread of the per-seed estimates).
Loops run over cells and metrics, never over judgments.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from judgeprobe.metrics import units
from judgeprobe.metrics.lexicons import Lexicons
from judgeprobe.metrics.registry import METRICS
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES, bootstrap_interval
from judgeprobe.metrics.units import CELL, UNIT, Drift

TIDY_SCHEMA = {
    "judge": pl.String(),
    "protocol": pl.String(),
    "condition": pl.String(),
    "metric": pl.String(),
    "value": pl.Float64(),
    "lo": pl.Float64(),
    "hi": pl.Float64(),
    "n": pl.Int64(),
    "seeds": pl.Int64(),
    "seed_sd": pl.Float64(),
}


def families(j: pl.LazyFrame, lex: Lexicons, drift: Drift) -> dict[str, pl.DataFrame]:
    """Every family's per-item contribution table."""
    builders: dict[str, Callable[[], pl.LazyFrame | pl.DataFrame]] = {
        "cell": lambda: units.cell_units(j),
        "paired": lambda: units.paired_units(j),
        "marginal": lambda: units.marginal_units(j),
        "reveal": lambda: units.reveal_units(j, lex),
        "same": lambda: units.same_units(j, lex, drift),
        "rhetoric": lambda: units.rhetoric_units(j, lex),
        "evidence": lambda: units.evidence_units(j),
        "position": lambda: units.position_units(j),
    }
    out = {}
    for name, build in builders.items():
        frame = build()
        out[name] = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
    return out


def compute_metrics(
    judgments: pl.DataFrame | pl.LazyFrame,
    lex: Lexicons,
    drift: Drift,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> pl.DataFrame:
    j = units.with_optional(judgments.lazy())
    fams = families(j, lex, drift)
    directional = {
        tuple(k): bool(v)
        for *k, v in fams["cell"].group_by(CELL).agg(pl.col("directional").all()).iter_rows()
    }
    rows: list[dict[str, object]] = []
    for spec in METRICS:
        table = fams[spec.family]
        if table.is_empty():
            continue
        cols = list(spec.columns)
        per_item = table.group_by([*CELL, *UNIT]).agg(pl.col(cols).sum())
        per_seed = table.group_by([*CELL, "seed"]).agg(pl.col(cols).sum())
        seed_parts = per_seed.partition_by(CELL, as_dict=True)
        for cell, items in per_item.partition_by(CELL, as_dict=True).items():
            key = tuple(str(k) for k in cell)
            if spec.directional and not directional.get(key, False):
                continue
            sums = items.select(cols).sum().to_numpy()[0].astype(np.float64)
            value = float(spec.stat(sums))
            seeds = seed_parts[cell].select(cols).to_numpy().astype(np.float64)
            per_seed_values = spec.stat(seeds)
            per_seed_values = per_seed_values[~np.isnan(per_seed_values)]
            defined = not np.isnan(value)  # undefined (e.g. LAO when nothing moved): "–"
            lo, hi = (
                bootstrap_interval(items, cols, spec.stat, resamples, seed)
                if defined
                else (float("nan"), float("nan"))
            )
            rows.append(
                {
                    "judge": key[0],
                    "protocol": key[1],
                    "condition": key[2],
                    "metric": spec.name,
                    "value": value if defined else None,
                    "lo": None if np.isnan(lo) else lo,
                    "hi": None if np.isnan(hi) else hi,
                    "n": items.height,
                    "seeds": len(per_seed_values),
                    "seed_sd": float(np.std(per_seed_values, ddof=1))
                    if len(per_seed_values) > 1
                    else None,
                }
            )
    return pl.DataFrame(rows, schema=TIDY_SCHEMA).sort(["judge", "protocol", "condition", "metric"])
