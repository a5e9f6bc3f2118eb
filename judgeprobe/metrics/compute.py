"""All metrics with 95% intervals over documents and the spread across seeds, as one tidy table.

Rows: (judge, protocol, condition, metric) with ``value``, ``lo``, ``hi`` (the 95% interval
over documents, ``uncertainty.interval``: score-type bounds from the documents' sums, no
resampling, unless ``method`` asks for the percentile bootstrap; a document's items, orders and
seeds count together, and paired metrics keep their pairs), ``ci_flag`` (why an interval may
not keep its promise, empty where it does), ``n`` (items with a contribution), ``documents``
(the documents they come from), ``seeds`` and ``seed_sd`` (the spread of the per-seed estimates).
Paired differences between protocols and between judges follow as ``diff_<metric>`` rows
whose ``versus`` names the other cell (``compare``). Counting is vectorised in Polars; Python
loops run over metrics and cells only, never over judgments.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
import polars as pl

from judgeprobe.conditions import BLIND
from judgeprobe.metrics.compare import difference_rows
from judgeprobe.metrics.families import (
    CONTINUOUS,
    directional_cells,
    families,
    numeric_columns,
    prepare,
    union_columns,
)
from judgeprobe.metrics.registry import METRICS, MetricSpec
from judgeprobe.metrics.resample import Draw, Key, Resampling, Totals, document_sums
from judgeprobe.metrics.uncertainty import (
    DEFAULT_RESAMPLES,
    SCORE,
    Method,
    by_group,
    nan_to_none,
    parallel,
    sign_test_p,
)
from judgeprobe.metrics.units import CELL, DOC, UNIT, Drift, with_optional
from judgeprobe.metrics.wording import KAPPA, kappa_of
from judgeprobe.text.lexicons import Lexicons

TIDY_SCHEMA = {
    "judge": pl.String(),
    "protocol": pl.String(),
    "condition": pl.String(),
    "metric": pl.String(),
    "value": pl.Float64(),
    "lo": pl.Float64(),
    "hi": pl.Float64(),
    "n": pl.Int64(),
    "documents": pl.Int64(),
    "seeds": pl.Int64(),
    "seed_sd": pl.Float64(),
    "versus": pl.String(),  # differences: the other cell, e.g. "protocol=baseline"
    "p": pl.Float64(),  # exact sign test over documents: differences, SENS, first-shown excess
    "ci_flag": pl.String(),  # why lo/hi may not keep their 95% promise (uncertainty.ci_flag)
}
BREAKDOWNS = ("domain", "subset")


def _cell_rows(
    key: Key,
    specs: list[MetricSpec],
    totals: Totals,
    per_seed: np.ndarray,
    columns: list[str],
    drawing: Resampling,
    resamples: int,
    seed: int,
) -> list[dict[str, object]]:
    """One cell's rows of a family's metrics: point estimate, interval, per-seed spread.

    ``per_seed`` holds the cell's sums of ``columns`` per seed, one row each.
    """
    # A metric in units of its own (``MetricSpec.scale``) scales its estimate and bounds.
    factors = {s.name: float(s.factor(totals.sums)) for s in specs}
    values = {s.name: float(s.stat(totals.values(s.columns))) * factors[s.name] for s in specs}
    # An undefined metric (e.g. LAO when nothing moved) has no interval: "–".
    defined = [s.name for s in specs if not np.isnan(values[s.name])]
    intervals = drawing.intervals(key, defined, resamples, seed)
    out: list[dict[str, object]] = []
    for spec in specs:
        lo, hi = intervals.get(spec.name, (float("nan"), float("nan")))
        lo, hi = lo * factors[spec.name], hi * factors[spec.name]
        by_seed = spec.stat(per_seed[:, [columns.index(c) for c in spec.columns]])
        if spec.scale:
            sums = {c: per_seed[:, columns.index(c)] for c in (spec.unit_column, spec.scale)}
            by_seed = by_seed * spec.factor(sums)
        by_seed = by_seed[~np.isnan(by_seed)]
        out.append(
            {
                "judge": key[0],
                "protocol": key[1],
                "condition": key[2],
                "metric": spec.name,
                "value": nan_to_none(values[spec.name]),
                "lo": nan_to_none(lo),
                "hi": nan_to_none(hi),
                "n": totals.n,
                "documents": totals.documents,
                "seeds": len(by_seed),
                "seed_sd": float(np.std(by_seed, ddof=1)) if len(by_seed) > 1 else None,
                "p": _sign_test(*drawing.separate[spec.name][key]) if spec.tested else None,
                "ci_flag": drawing.flag(key, spec.name) if spec.name in intervals else None,
            }
        )
    return out


def _sign_test(values: np.ndarray, weights: np.ndarray) -> float | None:
    """Sign test over documents of a metric's first column against its second.

    ``values`` are the documents' distinct sums, ``weights`` how many documents have each.
    """
    up = int(weights[values[:, 0] > values[:, 1]].sum())
    down = int(weights[values[:, 0] < values[:, 1]].sum())
    return sign_test_p(up, up + down)


def _levels(
    fams: dict[str, pl.DataFrame],
    directional: dict[tuple[str, ...], bool],
    resamples: int,
    seed: int,
    method: Method = SCORE,
) -> list[dict[str, object]]:
    """Every metric of every cell, over the cell's documents."""
    # Every document judged in a cell is drawn, also those that add nothing to a family
    # (no same-decision pair, say): the count of contributing documents varies as it would.
    judged = {
        tuple(map(str, r[:3])): int(r[3])
        for r in fams["cell"].group_by(CELL).agg(pl.col(DOC).n_unique()).iter_rows()
    }
    tasks: list[Callable[[], list[dict[str, object]]]] = []
    for family, table in fams.items():
        specs = [m for m in METRICS if m.family == family and set(m.columns) <= set(table.columns)]
        if table.is_empty() or not specs:
            continue
        numeric = numeric_columns(table)
        cols = union_columns(specs)
        scales = [s.scale for s in specs if s.scale and s.scale not in cols]
        sums = document_sums(
            table,
            CELL,
            numeric,
            count=pl.struct(UNIT).n_unique(),
            continuous={c: n for c, n in CONTINUOUS.items() if c in numeric},
            judged=judged,
        )
        drawing = sums.resampling({s.name: Draw(s.columns, s.stat) for s in specs}, cols, method)
        seed_cols = [*cols, *scales]
        per_seed = table.group_by([*CELL, "seed"]).agg(pl.col(seed_cols).sum()).sort("seed")
        seeds = by_group(per_seed, CELL, seed_cols)
        for key, totals in sums.totals.items():
            shown = [s for s in specs if not s.directional or directional.get(key, False)]
            tasks.append(
                partial(_cell_rows, key, shown, totals, seeds[key], seed_cols, drawing,
                        resamples, seed)
            )  # fmt: skip
    return [row for rows in parallel(tasks) for row in rows]


def _kappa_rows(units: pl.DataFrame) -> list[dict[str, object]]:
    """Fleiss' κ across wordings per judge × protocol (``metrics.wording``), on Blind's cell.

    A value without an interval (the flip share carries the interval); null where κ is
    undefined, the reason in the report and on the card.
    """
    out: list[dict[str, object]] = []
    for key, part in units.partition_by(["judge", "protocol"], as_dict=True).items():
        rated = part.filter(pl.col("rated") == 1)
        out.append(
            {
                "judge": str(key[0]), "protocol": str(key[1]), "condition": BLIND,
                "metric": KAPPA, "value": kappa_of(part).value, "lo": None, "hi": None,
                "n": rated.select(UNIT).n_unique(), "documents": rated[DOC].n_unique(),
                "seeds": rated["seed"].n_unique(), "seed_sd": None, "p": None, "ci_flag": None,
            }
        )  # fmt: skip
    return out


def compute_metrics(
    judgments: pl.DataFrame | pl.LazyFrame,
    lex: Lexicons,
    drift: Drift | None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    by: str | None = None,
    *,
    differences: bool = True,
    method: Method = SCORE,
) -> pl.DataFrame:
    """The tidy table (``TIDY_SCHEMA``).

    Every metric of every cell with its interval, then (``differences``) the paired protocol and
    judge differences of ``compare.COMPARED``.

    ``drift`` is the embedding scorer of explanation drift (``delta_e_same``); the lexical
    one (``delta_e_same_lexical``) is always computed beside it. ``by`` (``domain`` or
    ``subset``) computes everything per value of that column, which leads the table.
    ``method``: the intervals' (``uncertainty.Method``); ``resamples`` and ``seed`` serve the
    percentile bootstrap only.
    """
    if by is not None:
        return breakdown(
            judgments,
            by,
            lambda part: compute_metrics(
                part, lex, drift, resamples, seed, None, differences=differences, method=method
            ),
        )
    fams = families(prepare(judgments), lex, drift)
    directional = directional_cells(fams["cell"])
    rows = _levels(fams, directional, resamples, seed, method) + _kappa_rows(fams["wording"])
    if differences:
        rows += difference_rows(fams, directional, resamples, seed, method)
    return pl.DataFrame(rows, schema=TIDY_SCHEMA).sort(
        ["judge", "protocol", "condition", "metric", "versus"], nulls_last=False
    )


def breakdown(
    judgments: pl.DataFrame | pl.LazyFrame,
    by: str,
    compute: Callable[[pl.DataFrame], pl.DataFrame],
) -> pl.DataFrame:
    """``compute`` per value of ``by`` (``domain``, ``subset``), that column first.

    Both are properties of the item, so each part keeps every item's Blind partner.
    """
    if by not in BREAKDOWNS:
        raise ValueError(f"breakdown by {by!r}: choose one of {', '.join(BREAKDOWNS)}")
    frame = with_optional(judgments.lazy()).collect()
    parts = frame.with_columns(pl.col(by).fill_null("")).partition_by(by, as_dict=True)
    tables = [
        compute(part).select(pl.lit(str(value[0]), dtype=pl.String).alias(by), pl.all())
        for value, part in sorted(parts.items())
    ]
    return pl.concat(tables, how="vertical") if tables else pl.DataFrame()
