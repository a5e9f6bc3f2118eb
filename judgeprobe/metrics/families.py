"""Every metric family's per-item table (``units``), built from one judgments table.

Shared by the levels (``compute``) and the paired differences (``compare``).
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from judgeprobe.metrics import units
from judgeprobe.metrics.drift import lexical_drift
from judgeprobe.metrics.gold import gold_tie_units, gold_units
from judgeprobe.metrics.registry import MetricSpec
from judgeprobe.metrics.sensitivity import sensitivity_units
from judgeprobe.metrics.units import CELL, DOC, UNIT, Drift
from judgeprobe.text.lexicons import Lexicons

# column -> the count it sums over
CONTINUOUS = {"drift": "same", "drift_lexical": "same", "shift": "scored", "pshift": "probed"}


def prepare(judgments: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """Optional columns filled (document_id derived where absent) and the keys made categorical.

    Grouping and joining 10^6 rows on integers, not strings.
    """
    keys = pl.col(*CELL, DOC, *UNIT, "order")
    return units.with_optional(judgments.lazy()).with_columns(keys.cast(pl.Categorical))


def builders(
    j: pl.LazyFrame, lex: Lexicons, drift: Drift | None
) -> dict[str, Callable[[], pl.LazyFrame | pl.DataFrame]]:
    """Each family's per-unit table, built on demand.

    Explanation drift is scored lexically always and by ``drift`` too when given, so the two scorers
    can be read side by side.
    """
    scorers: dict[str, Drift] = {"drift_lexical": lexical_drift}
    if drift is not None and drift is not lexical_drift:
        scorers["drift"] = drift
    return {
        "cell": lambda: units.cell_units(j),
        "paired": lambda: units.paired_units(j),
        "marginal": lambda: units.marginal_units(j),
        "reveal": lambda: units.reveal_units(j, lex),
        "same": lambda: units.same_units(j, lex, scorers),
        "rhetoric": lambda: units.rhetoric_units(j, lex),
        "evidence": lambda: units.evidence_units(j),
        "position": lambda: units.position_units(j),
        "relabel": lambda: units.relabel_units(j),
        "sensitivity": lambda: sensitivity_units(j),
        "score": lambda: units.score_units(j),
        "prob": lambda: units.prob_units(j),
        "gold": lambda: gold_units(j),
        "gold_tie": lambda: gold_tie_units(j),
        "wording": lambda: units.wording_units(j),
    }


def families(
    j: pl.LazyFrame, lex: Lexicons, drift: Drift | None, only: set[str] | None = None
) -> dict[str, pl.DataFrame]:
    """Every family's (or the ``only`` ones') per-item contribution table."""
    built = {
        name: build()
        for name, build in builders(j, lex, drift).items()
        if only is None or name in only
    }
    lazy = {k: v for k, v in built.items() if isinstance(v, pl.LazyFrame)}
    # One collect for every plan: Polars shares the common scans and runs them in parallel.
    collected = dict(zip(lazy, pl.collect_all(lazy.values()), strict=True))
    return {k: v if isinstance(v, pl.DataFrame) else collected[k] for k, v in built.items()}


def numeric_columns(table: pl.DataFrame) -> list[str]:
    """The count columns of a unit table (its keys and flags left out)."""
    return [c for c in table.columns if c not in (*units.KEYS, "directional")]


def directional_cells(cell_family: pl.DataFrame) -> dict[tuple[str, ...], bool]:
    """Whether every item of a cell has a cue target (A or B)."""
    agg = cell_family.group_by(CELL).agg(pl.col("directional").all())
    return {tuple(map(str, k)): bool(v) for *k, v in agg.iter_rows()}


def union_columns(specs: list[MetricSpec]) -> list[str]:
    """The columns of all ``specs``, each once, in order."""
    return list(dict.fromkeys(c for s in specs for c in s.columns))
