"""Cell text: the interval as one Polars expression reads exactly like the scalar formatter,
every value prints one way, and a hostile Markdown cell stays one cell."""

from __future__ import annotations

import random
import re

import polars as pl

from judgeprobe.core.cells import cell, interval, interval_bounds, interval_expr
from judgeprobe.render.tables import markdown_cell, to_markdown


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


def test_cells_print_one_way() -> None:
    assert [cell(v) for v in (None, float("nan"), 0.12345, 3, "LDS")] == [
        "–", "–", "0.123", "3", "LDS"]  # fmt: skip
    assert interval(float("nan"), 0.1, 0.2) == "–"
    assert interval(37.66, 33.5, 42.0, decimals=1, unit="%") == "37.7% [33.5, 42.0]"
    assert [interval_bounds(0.1, 0.25), interval_bounds(float("nan"), 1.0)] == [
        "[0.100, 0.250]", "–"]  # fmt: skip


def test_hostile_markdown_cells_stay_one_cell() -> None:
    hostile = ["a | b", "line 1\nline 2\r\nline 3", "`code`", "back\\|slash", "<img src=x>",
               "< 0.001"]  # fmt: skip
    shown = [markdown_cell(c) for c in hostile]
    assert shown == ["a \\| b", "line 1<br>line 2<br>line 3", "\\`code\\`", "back\\\\\\|slash",
                     "\\<img src=x>", "< 0.001"]  # fmt: skip
    lines = to_markdown(pl.DataFrame({"id | x": hostile, "n": range(len(hostile))})).splitlines()
    assert len(lines) == 2 + len(hostile)  # no cell added a row
    unescaped_pipes = [len(re.findall(r"(?<!\\)(?:\\\\)*\|", line)) for line in lines]
    assert set(unescaped_pipes) == {3}  # no cell added a column
