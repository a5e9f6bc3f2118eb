"""How a value prints in a table cell: a number, an interval, a p-value, a missing value.

Every table judgeprobe shows (the terminal's estimates and differences, the report's and the
card's Markdown and HTML, the rubric's and the human check's tables) prints its cells through
these functions, so a p-value or an undefined metric reads the same wherever it appears.
``interval_expr`` is ``interval`` as one Polars expression, for whole columns at once (a test
holds the two to the same text).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import polars as pl
from rich.text import Text


def literal(values: Iterable[object]) -> list[Text]:
    """Terminal table cells shown exactly as written, never read as rich markup.

    Judge names, conditions and labels come from users and judges: rich would style ``[red]``
    in them, and fail on ``[/]``.
    """
    return [Text("" if v is None else str(v)) for v in values]


MISSING = "–"
"""An en dash: the value is undefined (e.g. LAO when nothing moved) or absent."""
DECIMALS = 3
P_FLOOR = 0.001  # below it a p-value prints as "< 0.001": more digits would be noise


def cell(value: object, decimals: int = DECIMALS) -> str:
    """Any cell: a float to ``decimals`` places, a count or a name as it is, missing as "–"."""
    if value is None:
        return MISSING
    if isinstance(value, float):
        return MISSING if math.isnan(value) else f"{value:.{decimals}f}"
    return str(value)


def interval(
    value: float | None,
    lo: float | None,
    hi: float | None,
    *,
    decimals: int = DECIMALS,
    unit: str = "",
) -> str:
    """``0.123 [0.100, 0.150]`` (``unit`` after the value, e.g. ``%``).

    The value alone when a bound is missing; "–" when the value is.
    """
    if value is None or math.isnan(value):
        return MISSING
    shown = f"{value:.{decimals}f}{unit}"
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return shown
    return f"{shown} [{lo:.{decimals}f}, {hi:.{decimals}f}]"


def interval_bounds(lo: float | None, hi: float | None, *, decimals: int = DECIMALS) -> str:
    """``[0.100, 0.150]`` for a table that shows the value in a column of its own."""
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return MISSING
    return f"[{lo:.{decimals}f}, {hi:.{decimals}f}]"


def p_value(p: float | None) -> str:
    """An exact test's p-value: three decimals, ``< 0.001`` below that, "–" when untested."""
    if p is None or math.isnan(p):
        return MISSING
    return f"< {P_FLOOR}" if p < P_FLOOR else f"{p:.{DECIMALS}f}"


def interval_expr(
    value: str = "value",
    lo: str = "lo",
    hi: str = "hi",
    *,
    decimals: int = DECIMALS,
    unit: str = "",
) -> pl.Expr:
    """``interval`` over three columns, named after ``value``: the same text, vectorised."""

    def text(column: str) -> pl.Expr:
        number = pl.when(pl.col(column).is_nan()).then(None).otherwise(pl.col(column))
        return number.round(decimals).cast(pl.Decimal(38, decimals), strict=False).cast(pl.String)

    undefined = pl.col(value).is_null() | pl.col(value).is_nan()
    no_bounds = pl.any_horizontal(pl.col(c).is_null() | pl.col(c).is_nan() for c in (lo, hi))
    return (
        pl.when(undefined)
        .then(pl.lit(MISSING))
        .when(no_bounds)
        .then(pl.format("{}" + unit, text(value)))
        .otherwise(pl.format("{}" + unit + " [{}, {}]", text(value), text(lo), text(hi)))
        .alias(value)
    )
