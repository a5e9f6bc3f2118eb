"""Differences between runs: one row's effect in two runs on the documents both judged.

Two runs (two judges, prompts or protocols) that judged the same items are two samples of the
same documents, so a row's effect in each is paired by document (docs/metrics.md, "Comparing
runs on the same items"). A row's effect in a run is an estimator over its documents' summed
unit counts (``Contribution``: the metric's formula, or a within-run paired difference such as
LDS − LDS(placebo) on the showings both cells paired). ``run_difference`` stacks both runs'
counts of each shared document into one pattern and reads Δ = effect(R₁) − effect(R₂) with the
metrics' own interval of a difference of two estimators (``uncertainty.versus``: MOVER over
the documents, their correlation included), and the exact sign test over documents of the
per-document direction. ``label_units`` gives the units of the rows against human labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from judgeprobe.core.estimate import Estimate
from judgeprobe.core.records import INVALID
from judgeprobe.metrics.compare import B, Cell, cell_units, paired_units
from judgeprobe.metrics.observed import human_labels, item_verdicts
from judgeprobe.metrics.registry import MetricSpec
from judgeprobe.metrics.uncertainty import (
    Estimator,
    contrast,
    interval,
    nan_to_none,
    ratio,
    sign_test_p,
    versus,
)
from judgeprobe.metrics.units import DOC, with_optional

LDS_MINUS_OLS = MetricSpec("LDS − OLS", "paired", ("lds", "ols", "paired"), contrast(0, 1, 2))
"""A cue row's effect without a placebo cell (``card.rows``): LDS − OLS over its pairs."""


@dataclass(frozen=True)
class Contribution:
    """One row's effect in one run: each document's summed counts and the formula over them."""

    stat: Estimator
    sums: pl.DataFrame  # DOC (string) and the stat's columns in order, one row per document

    @property
    def width(self) -> int:
        """The number of summed columns the stat reads."""
        return self.sums.width - 1

    def value(self) -> float | None:
        """The effect over every document held (None where undefined)."""
        totals = self.sums.drop(DOC).to_numpy().astype(np.float64).sum(axis=0)
        return nan_to_none(float(self.stat(totals)))

    def on(self, documents: Sequence[str]) -> Contribution:
        """The same row on ``documents`` only (a document without a unit sums to 0)."""
        kept = pl.DataFrame({DOC: list(documents)}, schema={DOC: pl.String})
        sums = kept.join(self.sums, on=DOC, how="left").fill_null(0)
        return Contribution(self.stat, sums)


def _summed(units: pl.DataFrame, columns: Sequence[str], stat: Estimator) -> Contribution:
    sums = (
        units.with_columns(pl.col(DOC).cast(pl.String))
        .group_by(DOC)
        .agg(pl.col(list(columns)).cast(pl.Float64).sum())
        .sort(DOC)
    )
    return Contribution(stat, sums.select(DOC, *columns))


def cell_contribution(units: pl.DataFrame, spec: MetricSpec, cell: Cell) -> Contribution:
    """``spec`` of one cell, from its family's table (``families``), by document."""
    return _summed(cell_units(units, spec, cell), spec.columns, spec.stat)


def paired_contribution(units: pl.DataFrame, spec: MetricSpec, a: Cell, b: Cell) -> Contribution:
    """spec(a) − spec(b) on the showings both cells count (``compare.paired_difference``)."""
    pairs = paired_units(units, spec, a, b)
    columns = [*spec.columns, *(c + B for c in spec.columns)]
    return _summed(pairs, columns, versus(spec.stat, spec.stat, len(spec.columns)))


@dataclass(frozen=True)
class RunDifference:
    """Δ = effect(R₁) − effect(R₂) of one row on the documents both runs judged."""

    value_1: float | None
    value_2: float | None
    delta: Estimate  # value_1 − value_2 with its 95% interval over the shared documents
    documents: int  # shared documents
    first_more: int  # documents whose own value is larger in R₁
    second_more: int  # … larger in R₂
    p: float | None  # exact two-sided sign test of first_more against second_more


def run_difference(
    first: Contribution, second: Contribution, documents: Sequence[str]
) -> RunDifference:
    """One row's paired difference between two runs over ``documents`` (module docstring)."""
    one, two = first.on(documents), second.on(documents)
    k = one.width
    values = np.hstack([one.sums.drop(DOC).to_numpy(), two.sums.drop(DOC).to_numpy()]).astype(
        np.float64
    )
    weights = np.ones(len(values))
    stat = versus(one.stat, two.stat, k)
    value_1, value_2 = one.value(), two.value()
    delta = None if value_1 is None or value_2 is None else value_1 - value_2
    lo, hi = (float("nan"), float("nan")) if delta is None else interval(values, weights, stat)
    with np.errstate(invalid="ignore", divide="ignore"):
        own_1, own_2 = one.stat(values[:, :k]), two.stat(values[:, k:])
    both = ~(np.isnan(own_1) | np.isnan(own_2))
    up = int((own_1[both] > own_2[both]).sum())
    down = int((own_1[both] < own_2[both]).sum())
    return RunDifference(
        value_1=value_1,
        value_2=value_2,
        delta=Estimate(value=delta, lo=nan_to_none(lo), hi=nan_to_none(hi)),
        documents=len(documents),
        first_more=up,
        second_more=down,
        p=sign_test_p(up, up + down),
    )


AGREEMENT = MetricSpec("agreement", "labels", ("agree", "labelled"), ratio(0, 1))
"""Item verdicts equal to the human label, A/B/Tie three categories (docs/metrics.md)."""
ACCURACY = MetricSpec("accuracy", "labels", ("correct", "decisive"), ratio(0, 1))
"""Item verdicts equal to a decisive (A or B) human label; a Tie is not correct."""


def label_units(blind: pl.DataFrame, labels: pl.DataFrame | None) -> pl.DataFrame:
    """Per judge × protocol × labelled item with a valid item verdict: the label rows' counts.

    ``blind``: Blind judgments; ``labels``: ``records.LABEL_SCHEMA`` rows (None: no labels).
    The item verdict is the order-consistent one (``observed.item_verdicts``), the label the
    majority of its votes (``observed.human_labels``).
    """
    human = human_labels(labels)
    columns = {"judge": pl.String, "protocol": pl.String, DOC: pl.String, "agree": pl.Int64,
               "labelled": pl.Int64, "correct": pl.Int64, "decisive": pl.Int64}  # fmt: skip
    if human.is_empty() or blind.is_empty():
        return pl.DataFrame(schema=columns)
    missing = [c for c in ("generator_1", "generator_2", "length_1", "length_2")
               if c not in blind.columns]  # fmt: skip
    blind = with_optional(blind.lazy()).with_columns(pl.lit(None, pl.Int64).alias(c)
        for c in missing if c.startswith("length")).collect()  # fmt: skip
    items = item_verdicts(blind).filter(pl.col("verdict") != INVALID)
    same = pl.col("verdict") == pl.col("human")
    decisive = pl.col("human").is_in(["A", "B"])
    return items.join(human, on="item_id", how="inner").select(
        pl.col("judge", "protocol").cast(pl.String),
        pl.col(DOC).cast(pl.String),
        agree=same.cast(pl.Int64),
        labelled=pl.lit(1, pl.Int64),
        correct=(same & decisive).cast(pl.Int64),
        decisive=decisive.cast(pl.Int64),
    )


def label_contribution(units: pl.DataFrame, spec: MetricSpec, judge: str, protocol: str
                       ) -> Contribution:  # fmt: skip
    """``AGREEMENT`` or ``ACCURACY`` of one judge × protocol, by document."""
    mine = units.filter((pl.col("judge") == judge) & (pl.col("protocol") == protocol))
    return _summed(mine, spec.columns, spec.stat)
