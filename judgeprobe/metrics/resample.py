"""The one interval pipeline of the metrics table: units summed per document, then intervals.

Levels (``compute``) and paired differences (``compare``) both hand ``document_sums`` a table of
units with group keys and a document column. It sums each document's units and gives each
group's ``Totals``; ``resampling`` then holds the statistics' document patterns (for the
percentile bootstrap, with the continuous columns pooled: ``uncertainty.pool_continuous``),
and ``Resampling.intervals`` reads their intervals (``uncertainty.interval``) one group at a
time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from judgeprobe.metrics.uncertainty import (
    SCORE,
    Interval,
    Method,
    Patterns,
    Stat,
    by_group,
    ci_flag,
    interval,
    patterns,
    pool_continuous,
    shared_intervals,
    with_zeros,
)
from judgeprobe.metrics.units import DOC

Key = tuple[str, ...]
"""A group's key values, as strings."""
COUNT = "units_counted"  # the per-document count column (never a unit table's column)


@dataclass(frozen=True)
class Draw:
    """A statistic to resample: the summed columns it reads, in order, and its formula."""

    columns: tuple[str, ...]
    stat: Stat


@dataclass(frozen=True)
class Totals:
    """One group's sums over all its documents."""

    sums: dict[str, float]  # every summed column (continuous ones unpooled)
    n: int  # what ``document_sums``'s ``count`` counts, summed over the documents
    documents: int

    def values(self, columns: Sequence[str]) -> np.ndarray:
        """The sums of ``columns``, in order, for a statistic."""
        return np.array([self.sums[c] for c in columns], dtype=np.float64)


@dataclass(frozen=True)
class Resampling:
    """The contribution patterns of named statistics, each alone and all together, by group."""

    draws: dict[str, Draw]
    separate: dict[str, dict[Key, Patterns]]
    union: dict[Key, Patterns]
    index: dict[str, list[int]]  # each statistic's columns as positions in the union's
    method: Method = SCORE

    def intervals(
        self, key: Key, names: Iterable[str], resamples: int, seed: int
    ) -> dict[str, Interval]:
        """The intervals of the ``names`` statistics in group ``key``.

        The percentile bootstrap reads them from one draw over the union of their columns where
        that is no dearer than a draw each (``uncertainty.shared_intervals``).
        """
        if self.method == SCORE or not self.union:
            return {n: self.interval(key, n, resamples, seed) for n in names}
        chosen = {n: (self.separate[n][key], self.draws[n].stat) for n in names}
        return shared_intervals(chosen, self.union[key], self.index, resamples, seed)

    def interval(self, key: Key, name: str, resamples: int, seed: int) -> Interval:
        """The interval of one statistic in group ``key``, on its own patterns."""
        stat = self.draws[name].stat
        return interval(*self.separate[name][key], stat, self.method, resamples, seed)

    def flag(self, key: Key, name: str) -> str | None:
        """``uncertainty.ci_flag`` of one statistic's interval in group ``key``."""
        return ci_flag(*self.separate[name][key], self.draws[name].stat, self.method)


@dataclass(frozen=True)
class DocumentSums:
    """Each group's units summed per document: what the cluster bootstrap resamples."""

    group: list[str]
    per_document: pl.DataFrame  # group, DOC, the summed columns as they are
    drawn: pl.DataFrame  # the same, continuous columns pooled: what resamples draw
    totals: dict[Key, Totals]
    idle: Mapping[Key, int]  # more documents the group judged, each contributing zeros

    def resampling(
        self, draws: Mapping[str, Draw], union: Sequence[str] | None = None, method: Method = SCORE
    ) -> Resampling:
        """The patterns of ``draws`` and, for the bootstrap, of the ``union`` columns.

        ``union`` holds all of their columns; without it each statistic is drawn alone. Score
        intervals read the documents' exact sums; the bootstrap draws the pooled ones.
        """
        cols = list(union or []) if method != SCORE else []
        table = self.per_document if method == SCORE else self.drawn
        return Resampling(
            dict(draws),
            {n: self._patterns(table, d.columns) for n, d in draws.items()},
            self._patterns(table, cols) if cols else {},
            {n: [cols.index(c) for c in d.columns] for n, d in draws.items()} if cols else {},
            method,
        )

    def _patterns(self, table: pl.DataFrame, columns: Sequence[str]) -> dict[Key, Patterns]:
        return with_zeros(patterns(table, self.group, list(columns)), self.idle)


def _totals(columns: list[str], row: np.ndarray) -> Totals:
    *sums, n, documents = row.tolist()
    return Totals(dict(zip(columns, sums, strict=True)), int(n), int(documents))


def document_sums(
    units: pl.DataFrame | pl.LazyFrame,
    group: list[str],
    columns: Sequence[str],
    *,
    count: pl.Expr,
    continuous: Mapping[str, str] | None = None,
    judged: Mapping[Key, int] | None = None,
) -> DocumentSums:
    """``columns`` of ``units`` summed per (group, document), and each group's totals.

    ``count`` is an aggregate of one document's units (its items, say), summed into
    ``Totals.n``. ``continuous`` maps each continuous column to the count it sums over; it is
    pooled within each group (``uncertainty.pool_continuous``) for drawing only. ``judged``: how
    many documents each group judged in all, those adding no unit here then drawn as zeros.
    """
    cols = list(columns)
    per_document = (
        units.lazy().group_by([*group, DOC]).agg(pl.col(cols).sum(), count.alias(COUNT)).collect()
    )
    drawn = per_document.lazy()
    for column, over in (continuous or {}).items():
        drawn = pool_continuous(drawn, column, group, over)
    summed = per_document.group_by(group).agg(
        pl.col(cols).sum(), pl.col(COUNT).sum(), pl.len().alias(DOC)
    )
    totals = {
        key: _totals(cols, rows[0])
        for key, rows in by_group(summed, group, [*cols, COUNT, DOC]).items()
    }
    idle = {k: judged.get(k, 0) - t.documents for k, t in totals.items()} if judged else {}
    return DocumentSums(group, per_document, drawn.collect(), totals, idle)
