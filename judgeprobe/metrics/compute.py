"""All metrics with 95% bootstrap intervals and the spread across seeds, as one tidy table.

Rows: (judge, protocol, condition, metric) with ``value``, ``lo``, ``hi`` (percentile
bootstrap over items, paired metrics resampling pairs together), ``n`` (items with a
contribution), ``seeds`` and ``seed_sd`` (the spread of the per-seed estimates). Counting is
vectorised in Polars; Python loops run over metrics and cells only, never over judgments.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from judgeprobe.metrics import units
from judgeprobe.metrics.lexicons import Lexicons
from judgeprobe.metrics.registry import METRICS, MetricSpec
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES, percentile_interval, pool_continuous
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
CONTINUOUS = {"drift"}


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
    built = {name: build() for name, build in builders.items()}
    lazy = {k: v for k, v in built.items() if isinstance(v, pl.LazyFrame)}
    # One collect for every plan: Polars shares the common scans and runs them in parallel.
    collected = dict(zip(lazy, pl.collect_all(lazy.values()), strict=True))
    return {k: v if isinstance(v, pl.DataFrame) else collected[k] for k, v in built.items()}


def _cells(frame: pl.DataFrame) -> dict[tuple[str, ...], pl.DataFrame]:
    return {tuple(map(str, k)): v for k, v in frame.partition_by(CELL, as_dict=True).items()}


def _rows(
    spec: MetricSpec,
    cols: list[str],
    totals: dict[tuple[str, ...], pl.DataFrame],
    per_seed: dict[tuple[str, ...], pl.DataFrame],
    patterns: dict[tuple[str, ...], pl.DataFrame],
    directional: dict[tuple[str, ...], bool],
    resamples: int,
    seed: int,
) -> list[dict[str, object]]:
    """One metric's rows, one per cell: point estimate, interval, per-seed spread."""
    out: list[dict[str, object]] = []
    for key, total in totals.items():
        if spec.directional and not directional.get(key, False):
            continue
        value = float(spec.stat(total.select(cols).to_numpy()[0].astype(np.float64)))
        defined = not np.isnan(value)  # undefined (e.g. LAO when nothing moved): "–"
        lo = hi = float("nan")
        if defined:
            p = patterns[key]
            values = p.select(cols).to_numpy().astype(np.float64)
            lo, hi = percentile_interval(values, p["len"].to_numpy(), spec.stat, resamples, seed)
        by_seed = spec.stat(per_seed[key].select(cols).to_numpy().astype(np.float64))
        by_seed = by_seed[~np.isnan(by_seed)]
        out.append(
            {
                "judge": key[0],
                "protocol": key[1],
                "condition": key[2],
                "metric": spec.name,
                "value": value if defined else None,
                "lo": None if np.isnan(lo) else lo,
                "hi": None if np.isnan(hi) else hi,
                "n": int(total["n"][0]),
                "seeds": len(by_seed),
                "seed_sd": float(np.std(by_seed, ddof=1)) if len(by_seed) > 1 else None,
            }
        )
    return out


def compute_metrics(
    judgments: pl.DataFrame | pl.LazyFrame,
    lex: Lexicons,
    drift: Drift,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> pl.DataFrame:
    # Keys as categoricals: grouping and joining 10^6 rows on integers, not strings.
    keys = pl.col(*CELL, *UNIT, "order")
    j = units.with_optional(judgments.lazy()).with_columns(keys.cast(pl.Categorical))
    fams = families(j, lex, drift)
    directional = {
        tuple(map(str, k)): bool(v)
        for *k, v in fams["cell"].group_by(CELL).agg(pl.col("directional").all()).iter_rows()
    }
    rows: list[dict[str, object]] = []
    for family, table in fams.items():
        specs = [m for m in METRICS if m.family == family]
        if table.is_empty() or not specs:
            continue
        numeric = [c for c in table.columns if c not in (*CELL, *UNIT, "seed", "directional")]
        per_item = table.group_by([*CELL, *UNIT]).agg(pl.col(numeric).sum())
        totals = _cells(per_item.group_by(CELL).agg(pl.col(numeric).sum(), n=pl.len()))
        per_seed = _cells(table.group_by([*CELL, "seed"]).agg(pl.col(numeric).sum()))
        pooled = per_item.lazy()
        for c in CONTINUOUS & set(numeric):
            pooled = pool_continuous(pooled, c, CELL)
        pooled_items = pooled.collect()
        for spec in specs:
            cols = list(spec.columns)
            # Patterns in a fixed order, so a seeded bootstrap repeats exactly.
            patterns = _cells(pooled_items.group_by([*CELL, *cols]).len().sort([*CELL, *cols]))
            rows += _rows(spec, cols, totals, per_seed, patterns, directional, resamples, seed)
    return pl.DataFrame(rows, schema=TIDY_SCHEMA).sort(["judge", "protocol", "condition", "metric"])
