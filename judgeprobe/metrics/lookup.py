"""The metrics table read by cell and metric: the one place that looks a figure up.

The tidy table (``compute.compute_metrics``) is long: one row per judge × protocol × condition ×
metric. The card and the report's sentences read single figures out of it; they do so here, by
a metric name the registry defines (``registry.BY_NAME``, or Fleiss' κ, ``wording.KAPPA``), so a
misspelt name fails at once instead of reading as a missing figure.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from judgeprobe.core.estimate import Estimate
from judgeprobe.metrics.registry import BY_NAME
from judgeprobe.metrics.wording import KAPPA

Cell = tuple[str, str, str]
"""(judge, protocol, condition)."""

NONE = Estimate(value=None)
"""No figure."""
NAMES = frozenset([*BY_NAME, KAPPA])
"""Every metric a level row of the tidy table may carry."""


@dataclass(frozen=True, slots=True)
class Figure:
    """One metric of one cell as the tidy table holds it (None where it has no such row)."""

    judge: str
    protocol: str
    condition: str
    estimate: Estimate = NONE  # the value with its 95% interval (``uncertainty.interval``)
    n: int | None = None  # units with a contribution
    documents: int | None = None  # the documents they come from
    p: float | None = None  # the exact sign test over documents, for a tested metric
    ci_flag: str | None = None  # why lo and hi may not keep their promise (None: they do)

    @property
    def cell(self) -> Cell:
        """Where the figure was measured."""
        return self.judge, self.protocol, self.condition

    @property
    def value(self) -> float | None:
        """The point estimate (None: undefined, or no such row)."""
        return self.estimate.value

    @property
    def lo(self) -> float | None:
        """The interval's lower bound."""
        return self.estimate.lo

    @property
    def hi(self) -> float | None:
        """The interval's upper bound."""
        return self.estimate.hi

    @property
    def interval(self) -> tuple[float | None, float | None, float | None]:
        """``(value, lo, hi)``."""
        return self.value, self.lo, self.hi

    @property
    def found(self) -> Estimate | None:
        """The estimate, or None where the table has no figure at all (as a card row holds it)."""
        return Estimate.of(*self.interval)


def known(metric: str) -> str:
    """``metric`` when the registry defines it; a ``KeyError`` naming it otherwise."""
    if metric not in NAMES:
        raise KeyError(f"no metric {metric!r} in metrics.registry")
    return metric


class MetricsTable:
    """The level rows of a tidy table, indexed by cell and metric (differences left out)."""

    def __init__(self, tidy: pl.DataFrame) -> None:
        level = tidy.filter(pl.col("versus").is_null()) if "versus" in tidy.columns else tidy
        self._by: dict[tuple[str, str, str, str], Figure] = {}
        wanted = ("n", "documents", "p", "ci_flag")
        columns = [c for c in wanted if c in level.columns]
        for r in level.iter_rows(named=True):
            key = (r["judge"], r["protocol"], r["condition"], r["metric"])
            if key in self._by:  # a breakdown's parts repeat cells: the first, as before
                continue
            value = r.get("value")
            value = None if isinstance(value, float) and value != value else value
            estimate = Estimate(value=value, lo=r.get("lo"), hi=r.get("hi"))
            self._by[key] = Figure(*key[:3], estimate, **{c: r[c] for c in columns})

    def get(self, cell: Cell, metric: str) -> Figure:
        """The cell's ``metric``; an empty figure (value None) where the table lacks it."""
        found = self._by.get((*cell, known(metric)))
        return found if found is not None else Figure(*cell)

    def cells(self, metric: str) -> list[Figure]:
        """Every cell's ``metric`` that has a value, by judge, protocol and condition."""
        name = known(metric)
        found = [f for (*_, m), f in self._by.items() if m == name and f.value is not None]
        return sorted(found, key=lambda f: f.cell)
