"""The card's rows as one tagged union, and card.csv, their flat view for people.

A row is of one kind (``CardRow``, told apart by ``kind``), each kind its own small model and
module under ``card.kinds``, with only its own fields: cue (``cue.py``), position
(``position.py``), pressure (``pressure.py``), sensitivity and accuracy (``reading.py``),
wording (``wording.py``), repeat (``repeat.py``), the observed rows of a judge's logs
(``observed.py``) and the alt-test (``alttest.py``). Adding a kind is one module and one entry
in ``CardRow``; the order of the union is the card's order of kinds within a judge × protocol
(``KIND_ORDER``).

The row modules (``card.rows``, ``card.gold``, ``card.sensitivity``, ``card.wording``,
``card.observed``, ``card.alttest``) build the rows; the renderer, the sequential rule, the
self-test and ``card.json`` read their fields. ``card.csv`` is a flat view of the same records
(``CSV_COLUMNS``), its columns as spreadsheets have always read them; nothing reads it back.
"""

from __future__ import annotations

from typing import Annotated, get_args

import polars as pl
from pydantic import BaseModel, ConfigDict, Field

from judgeprobe.card.kinds.alttest import AltTestRow
from judgeprobe.card.kinds.base import (
    INTERVAL_TEST,
    SIGN_TEST,
    RowBase,
    RowVerdict,
    SettledRow,
    TestedRow,
)
from judgeprobe.card.kinds.cue import CueRow
from judgeprobe.card.kinds.observed import (
    ObservedBase,
    ObservedPositionRow,
    ObservedRow,
    RandomizedPositionRow,
)
from judgeprobe.card.kinds.position import PositionRow
from judgeprobe.card.kinds.pressure import PressureRow
from judgeprobe.card.kinds.reading import AccuracyRow, ReadingRow, SensitivityRow
from judgeprobe.card.kinds.repeat import RepeatRow
from judgeprobe.card.kinds.wording import WordingRow
from judgeprobe.core.estimate import Estimate, shown

CardRow = Annotated[
    SensitivityRow
    | AccuracyRow
    | CueRow
    | PressureRow
    | WordingRow
    | PositionRow
    | RepeatRow
    | ObservedPositionRow
    | RandomizedPositionRow
    | ObservedRow
    | AltTestRow,
    Field(discriminator="kind"),
]
"""A card row of one kind, told apart by its ``kind``."""

ROW_TYPES: tuple[type[RowBase], ...] = get_args(get_args(CardRow)[0])
"""Every kind's model, in the card's order."""

KIND_ORDER: dict[str, int] = {
    kind: i
    for i, kind in enumerate(
        k for model in ROW_TYPES for k in get_args(model.model_fields["kind"].annotation)
    )
}
"""The card's order of kinds within a judge × protocol: whether it reads, then what moves it."""


class CalibratedEstimate(BaseModel):
    """A figure of the card corrected by a calibration (its own section, not a row)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    judge: str
    """The judge."""
    protocol: str
    """Its protocol."""
    quantity: str
    """What is estimated (e.g. a condition's LDS, the judge's accuracy)."""
    raw: Estimate | None = None
    """The figure as measured."""
    calibrated: Estimate
    """The figure corrected by the calibration, with its interval."""
    method: str = ""
    """How it was calibrated, in words."""


def _cell(got: dict[str, object], column: str) -> object:
    """card.csv's ``column`` of a row's fields: an estimate's value or bound, or a field."""
    name, end = column, ""
    if column.endswith(("_lo", "_hi")):
        name, end = column[:-3], column[-2:]
    found = got.get(name)
    if isinstance(found, Estimate):
        return {"": found.value, "lo": found.lo, "hi": found.hi}[end]
    return found


def csv_record(row: RowBase) -> dict[str, object]:
    """The row as one line of card.csv (``CSV_COLUMNS``; a field the kind lacks is empty).

    Its LDS, TS and OLS columns hold a pressure row's RS_opp, RS_tie, RS_out and an accuracy
    row's ACC, ACC_longer, ACC_shorter, as card.csv always has: a spreadsheet's columns stay.
    """
    got = {**dict(row), **dict(zip(("LDS", "TS", "OLS"), row.csv_moves(), strict=True))}
    return {column: _cell(got, column) for column in CSV_COLUMNS}


def _estimate_columns(name: str) -> dict[str, pl.DataType]:
    return {f"{name}{s}": pl.Float64() for s in ("", "_lo", "_hi")}


CSV_COLUMNS: dict[str, pl.DataType] = {
    "judge": pl.String(),
    "protocol": pl.String(),
    "row": pl.String(),
    "family": pl.String(),
    "kind": pl.String(),
    "n": pl.Int64(),
    "documents": pl.Int64(),
    **_estimate_columns("LDS"),
    **_estimate_columns("TS"),
    **_estimate_columns("OLS"),
    "effect_name": pl.String(),
    **_estimate_columns("effect"),
    **_estimate_columns("noise_floor"),
    "moved": pl.Int64(),
    **_estimate_columns("silent"),
    "nondiscriminating": pl.Float64(),
    **_estimate_columns("consistency"),
    "up": pl.Int64(),
    "down": pl.Int64(),
    "p": pl.Float64(),
    "q": pl.Float64(),
    "mde": pl.Float64(),
    "threshold": pl.Float64(),
    "verdict": pl.String(),
    **_estimate_columns("score_shift"),
    **_estimate_columns("prob_shift"),
    "settled_at": pl.Int64(),
    "documents_needed": pl.Int64(),
    **_estimate_columns("sequential"),
}
"""card.csv's columns, in order: the flat view of the rows (``csv_record``)."""


def rows_frame(rows: tuple[RowBase, ...] | list[RowBase]) -> pl.DataFrame:
    """The rows as card.csv holds them."""
    return pl.DataFrame([csv_record(r) for r in rows], schema=CSV_COLUMNS, orient="row")


__all__ = [
    "INTERVAL_TEST",
    "SIGN_TEST",
    "AccuracyRow",
    "AltTestRow",
    "CardRow",
    "CueRow",
    "Estimate",
    "ObservedBase",
    "ObservedPositionRow",
    "ObservedRow",
    "PositionRow",
    "PressureRow",
    "RandomizedPositionRow",
    "ReadingRow",
    "RepeatRow",
    "RowBase",
    "RowVerdict",
    "SensitivityRow",
    "SettledRow",
    "TestedRow",
    "WordingRow",
    "shown",
]
