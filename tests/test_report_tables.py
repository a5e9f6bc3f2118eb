"""Interval text as one Polars expression reads exactly like the scalar formatter."""

from __future__ import annotations

import random

import polars as pl

from judgeprobe.core.cells import interval, interval_expr


def test_interval_text_matches_the_scalar_formatter() -> None:
    rng = random.Random(1)
    rows: list[tuple[float | None, ...]] = [
        tuple(rng.uniform(-50, 50) for _ in range(3)) for _ in range(5000)
    ]
    rows += [(0.1, None, None), (None, None, None), (0.25, 0.0, 0.5), (1.0, float("nan"), 2.0)]
    frame = pl.DataFrame(rows, schema=["value", "lo", "hi"], orient="row")
    assert frame.select(interval_expr())["value"].to_list() == [interval(*row) for row in rows]


def test_undefined_values_and_units() -> None:
    frame = pl.DataFrame(
        {"p": [None, float("nan"), 37.66], "lo": [1.0, 1.0, 33.5], "hi": [2.0] * 3}
    )
    shown = frame.select(interval_expr("p", decimals=1, unit="%"))["p"].to_list()
    assert shown == ["–", "–", "37.7% [33.5, 2.0]"]
