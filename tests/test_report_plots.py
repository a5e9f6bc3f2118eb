"""Charts with nothing to show collapse to one line; the report keeps the line, not a PNG."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from judgeprobe.metrics.compute import TIDY_SCHEMA
from judgeprobe.metrics.drift import lexical_drift
from judgeprobe.metrics.load import load_run
from judgeprobe.render import plots
from judgeprobe.report import compose
from judgeprobe.report.run import run_report
from judgeprobe.text.lexicons import load_lexicons
from tests.reportdata import rows, run_dir, table


def tidy(values: list[tuple[str, str, float | None, float | None, float | None]]) -> pl.DataFrame:
    """Rows (condition, metric, value, lo, hi) for judge j, protocol baseline."""
    return pl.DataFrame(
        [
            {
                "judge": "j",
                "protocol": "baseline",
                "condition": c,
                "metric": m,
                "value": v,
                "lo": lo,
                "hi": hi,
                "n": 20,
                "seeds": 1,
                "seed_sd": None,
            }
            for c, m, v, lo, hi in values
        ],
        schema=TIDY_SCHEMA,
    )


def test_all_undefined_and_all_zero_charts_are_one_line() -> None:
    undefined = tidy([("True", "LAO", None, None, None), ("Flip", "LAO", None, None, None)])
    assert plots.grouped_bars(undefined, ["LAO"], "condition", "protocol", "LAO") == (
        "LAO: nothing to draw — every value is undefined (–)."
    )
    zero = tidy([(c, m, 0.0, 0.0, 0.0) for c in ("True", "Flip") for m in ("LDS", "TS", "OLS")])
    assert plots.stacked_shifts(zero, "LDS / TS / OLS") == (
        "LDS / TS / OLS: nothing to draw — every value is 0."
    )
    mixed = tidy([("True", "EDR", 0.0, 0.0, 0.0), ("True", "ND", None, None, None)])
    assert plots.grouped_bars(mixed, ["EDR", "ND"], "protocol", "protocol", "Blind") == (
        "Blind (EDR, ND): nothing to draw — every value is 0 or undefined (–)."
    )


def test_a_chart_with_something_to_show_is_drawn() -> None:
    some = tidy([("True", "LAO", 0.5, 0.2, 0.8), ("Flip", "LAO", None, None, None)])
    assert isinstance(plots.grouped_bars(some, ["LAO"], "condition", "protocol", "LAO"), bytes)
    # A zero difference with an interval around it is still information.
    spread = tidy([("True", "marginal_LDS", 0.0, -0.1, 0.1)])
    chart = plots.grouped_bars(spread, ["marginal_LDS"], "condition", "protocol", "m")
    assert isinstance(chart, bytes)
    assert plots.grouped_bars(tidy([]), ["LAO"], "condition", "protocol", "LAO") is None


def test_the_report_shows_the_line_instead_of_an_empty_chart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compose, "default_drift", lambda: (lexical_drift, "delta_e_same_lexical"))
    blind = ["B"] * 14 + ["A"] * 4 + ["Tie"] * 2
    run = run_dir(tmp_path / "run", table(rows(blind), rows(blind, "True")))  # nothing moves
    run_report(load_run(run), load_lexicons(None), resamples=100)
    md = (run / "report.md").read_text()
    assert "*LAO: nothing to draw — every value is undefined (–).*" in md
    # 0 of 20 moved, but its exact interval reaches 0.168: the whiskers are drawn, not a line.
    assert "LDS / TS / OLS: nothing to draw" not in md
    assert "![shifts](plots/shifts.png)" in md
    assert "plots/lao.png" not in md
    assert not (run / "plots" / "lao.png").exists()
    assert "![blind](plots/blind.png)" in md  # Blind EDR/ND has something to draw
    page = (run / "report.html").read_text()
    assert "<p class='note empty-chart'>LAO: nothing to draw" in page
    # The headline opens the page and says nothing moved.
    assert md.index("## What this run found") < md.index("## About this run")
    assert "- Nothing moved: no verdict changed against Blind in 1 readable cue cell." in md
