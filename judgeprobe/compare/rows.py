"""Each card row of a run as its documents' counts: what ``compare`` pairs between two runs.

A run's card (``card.rows.make_card``, or ``card.observed`` for a logs run) says which rows
it has; each row's effect is then re-read as a ``metrics.between.Contribution`` from the same
unit tables the metrics table sums (``metrics.families``), by the same formula the card row
applies: the cue row's LDS − LDS(placebo) on the showings both cells paired (LDS − OLS without
a placebo), RS − RS(Reask) for pressure, first-shown excess, SENS, SENS_gold, the wording flip
share, the noise floor. On the documents the card was made from, a contribution's value is
the card's effect (``tests/test_compare.py`` holds every kind to it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.card.kinds.base import RowBase
from judgeprobe.card.rows import NOISE_FLOOR, cue_placebo, position_row_name
from judgeprobe.conditions import BLIND, NAMED_BLIND, REASK, placebo_of
from judgeprobe.metrics.between import (
    ACCURACY,
    AGREEMENT,
    LDS_MINUS_OLS,
    Contribution,
    cell_contribution,
    label_contribution,
    paired_contribution,
)
from judgeprobe.metrics.compare import Cell
from judgeprobe.metrics.registry import BY_NAME, MetricSpec
from judgeprobe.metrics.sensitivity import POOLED

Kind = str
"""A row's kind: a card row's (``card.record.RowKind``) or ``human`` (against human labels)."""
HUMAN = "human"
TWO_SIDED = {"position", "wording", "repeat", "observed-position"}
"""Rows whose ideal is an effect of 0 either way: better is a smaller |effect|."""
LARGER = {"sensitivity", "accuracy", HUMAN}
"""Rows whose ideal is a large effect: better is larger."""
ROW_OF_LABELS = {AGREEMENT.name: "agreement with people", ACCURACY.name: "accuracy against people"}


@dataclass(frozen=True)
class Row:
    """One comparable row of a run: its name, kind, what its effect is, and its counts."""

    judge: str
    protocol: str
    row: str
    kind: Kind
    effect_name: str
    contribution: Contribution


def _cells(units: pl.DataFrame) -> set[Cell]:
    found = units.select(pl.col("judge", "protocol", "condition").cast(pl.String)).unique()
    return {(str(a), str(b), str(c)) for a, b, c in found.iter_rows()}


def _with_placebo(units: pl.DataFrame, spec: MetricSpec, cell: Cell, placebo: str,
                  fallback: MetricSpec) -> Contribution:  # fmt: skip
    """spec(cell) − spec(placebo) on the shared showings, else ``fallback`` alone (the card's)."""
    if placebo:
        paired = paired_contribution(units, spec, cell, (cell[0], cell[1], placebo))
        if paired.sums.height:
            return paired
    return cell_contribution(units, fallback, cell)


POSITION = {position_row_name(c): c for c in (BLIND, *NAMED_BLIND.values())}
PLAIN: dict[str, tuple[str, str]] = {
    "sensitivity": ("SENS", POOLED),
    "accuracy": ("SENS_gold", BLIND),
    "wording": ("wording_flip", BLIND),
    "repeat": (NOISE_FLOOR[1], NOISE_FLOOR[0]),
    "observed-unreadable": ("invalid_rate", BLIND),
}
"""Row kinds whose effect is one registry metric of one cell: the metric and the condition."""


def contribution(
    row: RowBase, fams: dict[str, pl.DataFrame], cues: set[Cell]
) -> Contribution | None:
    """The row's effect as document counts; None for a kind ``compare`` does not pair."""
    cell: Cell = (row.judge, row.protocol, row.row)
    if row.kind == "cue":
        units = fams["paired"]
        return _with_placebo(units, BY_NAME["LDS"], cell, cue_placebo(cell, cues), LDS_MINUS_OLS)
    if row.kind == "pressure":
        units, rs = fams["reveal"], BY_NAME["RS"]
        reask = placebo_of(row.row, REASK)
        return _with_placebo(units, rs, cell, reask if (*cell[:2], reask) in _cells(units) else "",
                             rs)  # fmt: skip
    if row.kind in ("position", "observed-position"):
        spec = BY_NAME["first_shown_excess"]
        return cell_contribution(fams[spec.family], spec, (*cell[:2], POSITION.get(row.row, BLIND)))
    if row.kind in PLAIN:
        metric, condition = PLAIN[row.kind]
        spec = BY_NAME[metric]
        return cell_contribution(fams[spec.family], spec, (*cell[:2], condition))
    return None


FAMILIES = {"paired", "reveal", "position", "sensitivity", "gold", "wording", "cell"}
"""The unit tables the compared rows read (``metrics.families``)."""


def card_rows(
    records: Sequence[RowBase], fams: dict[str, pl.DataFrame]
) -> tuple[list[Row], list[str]]:
    """Every comparable row of a card, and the rows it cannot pair (named, with why)."""
    cues = {(r.judge, r.protocol, r.row) for r in records if r.kind == "cue"}
    rows: list[Row] = []
    skipped: list[str] = []
    for r in records:
        try:
            got = contribution(r, fams, cues)
        except JudgeprobeError as e:  # a cell the card shows but no unit table holds
            skipped.append(f"{r.judge} · {r.protocol} · {r.row}: {e}")
            continue
        if got is None:
            skipped.append(f"{r.judge} · {r.protocol} · {r.row}: no paired estimator for "
                           f"{r.kind} rows")  # fmt: skip
            continue
        rows.append(Row(r.judge, r.protocol, r.row, r.kind, r.effect_name, got))
    return rows, skipped


def label_rows(units: pl.DataFrame) -> list[Row]:
    """Agreement and accuracy against human labels per judge × protocol (``label_units``)."""
    rows: list[Row] = []
    cells = sorted(set(units.select("judge", "protocol").unique().iter_rows()))
    for judge, protocol in cells:
        for spec in (AGREEMENT, ACCURACY):
            got = label_contribution(units, spec, judge, protocol)
            rows.append(Row(judge, protocol, ROW_OF_LABELS[spec.name], HUMAN, spec.name, got))
    return rows
