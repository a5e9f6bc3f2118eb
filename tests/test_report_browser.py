"""The evidence browser: rows, their moves against Blind, the page bound, and real clicks in
headless Chromium on a report built from a hand-made run (no server)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
import polars as pl
import pytest

from judgeprobe.metrics.drift import lexical_drift
from judgeprobe.metrics.estimates import estimates_table
from judgeprobe.metrics.load import load_run
from judgeprobe.report import compose
from judgeprobe.report.browser import MAX_ROWS, browser_html, browser_rows
from judgeprobe.report.run import run_report
from judgeprobe.text.lexicons import load_lexicons
from tests import chromium
from tests.reportdata import rows, run_dir, table

if TYPE_CHECKING:
    from playwright.sync_api import Page as PlaywrightPage

BLIND = ["B"] * 14 + ["A"] * 4 + ["Tie"] * 2
# Under True (target A): items 0-5 move B → A, 6-7 B → Tie, 14-15 A → B, 19 is Invalid.
TRUE = ["A"] * 6 + ["Tie"] * 2 + BLIND[8:14] + ["B"] * 2 + BLIND[16:19] + ["Invalid"]
# Under Flip (target B): items 14-17 move A → B.
FLIP = BLIND[:14] + ["B"] * 4 + BLIND[18:]


def judgments() -> pl.DataFrame:
    return table(rows(BLIND), rows(TRUE, "True"), rows(FLIP, "Flip"), rows(BLIND[:10], "Blind2"))


def test_moves_agree_with_the_estimates_table() -> None:
    j = judgments()
    moves = browser_rows(j).group_by("condition", "moved").len()
    count = {(c, m): n for c, m, n in moves.iter_rows()}
    estimates = {r["condition"]: r for r in estimates_table(j).iter_rows(named=True)}
    for cond in ("True", "Flip"):
        assert count.get((cond, "toward"), 0) == estimates[cond]["lds_count"]
        assert count.get((cond, "tie"), 0) == estimates[cond]["ts_count"]
        assert count.get((cond, "away"), 0) == estimates[cond]["ols_count"]
    assert count[("True", "toward")] == 6
    assert count[("True", "away")] == 2
    assert count[("True", "unpaired")] == 1
    assert count[("Flip", "toward")] == 4
    # A cue without a target (Blind2, target none) is not directional: nothing moved here.
    assert count[("Blind2", "same")] == 10


def test_rows_show_moves_first_and_each_judgment_beside_its_blind_twin() -> None:
    r = browser_rows(judgments())
    assert r["moved"].head(10).to_list() == ["toward"] * 10  # 6 under True, 4 under Flip
    first = r.row(0, named=True)
    assert (first["condition"], first["item_id"]) == ("Flip", "doc-14")
    assert (first["blind_verdict"], first["verdict"]) == ("A", "B")
    assert first["blind_explanation"] == "Blind explanation of item 14: verdict A."
    assert r.height == 20 + 20 + 10  # every cue judgment, none of the Blind ones


def test_a_blind_only_run_lists_its_blind_judgments() -> None:
    r = browser_rows(table(rows(BLIND)))
    assert r.height == 20
    assert set(r["moved"]) == {"blind"}
    assert "Blind only (20)" in browser_html(r)


def test_html_filters_escaping_and_the_cue_shown() -> None:
    j = judgments().with_columns(
        explanation=pl.when(pl.col("item_id") == "doc-00")
        .then(pl.lit("<script>alert('x')</script> & more"))
        .otherwise("explanation")
    )
    page = browser_html(browser_rows(j))
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)" in page
    for chip in ("all (50)", "moved (14)", "toward the cue (10)", "into Tie (2)", "True (20)"):
        assert chip in page
    assert page.count("<tr data-judge=") == 50
    assert "1: LLM<br>2: TradML<br>favours A" in page  # the labels the judge saw, and target
    assert "no verdict in reply" in page  # an Invalid judgment says why
    assert "http" not in page  # self-contained


def test_the_page_stays_bounded_for_a_big_run() -> None:
    n = MAX_ROWS + 500
    long = "word " * 5_000
    j = table(rows(["B"] * n, explanation=long), rows(["A"] * n, "True", explanation=long))
    page = browser_html(browser_rows(j))
    assert page.count("<tr data-judge=") == MAX_ROWS
    assert f"Showing the first {MAX_ROWS:,} of {n:,} judgments" in page
    assert len(page) < 6_000_000  # long explanations are cut


def test_pbp_quotes_are_listed_with_their_match_scores() -> None:
    details = {
        "notes": {
            "accuracy": {
                "summary_1": {
                    "note": "faithful",
                    "quotes": [
                        {
                            "quote": "the budget",
                            "source": "document",
                            "match": 1.0,
                            "fabricated": False,
                        },
                        {
                            "quote": "a made-up claim",
                            "source": "",
                            "match": 0.41,
                            "fabricated": True,
                        },
                    ],
                },
                "summary_2": {"note": "thin", "quotes": []},
            }
        }
    }
    blob = orjson.dumps(details).decode()
    j = table(rows(BLIND, protocol="pbp"), rows(TRUE, "True", protocol="pbp", details=blob))
    page = browser_html(browser_rows(j))
    assert "2 quotes, 1 fabricated (match &lt; 0.9)" in page
    assert "accuracy · summary_1: “the budget” → document 1.00" in page
    assert "<li class='fab'>accuracy · summary_1: “a made-up claim” → no source 0.41" in page


def _visible(page: PlaywrightPage) -> int:
    return int(
        page.evaluate(
            "Array.from(document.querySelectorAll('#evidence tbody tr')).filter(r => !r.hidden)"
            ".length"
        )
    )


def check_browser_filters(report: Path) -> None:
    """Open the report, click filters with the mouse and check the rows follow."""
    rows_by_move = _rows_by_move(report)
    with chromium.page() as tab:
        page = tab.page
        page.goto(report.resolve().as_uri())
        total = _visible(page)
        assert total == sum(rows_by_move.values()) > 0
        moved = sum(rows_by_move.get(m, 0) for m in ("silent", "toward", "away", "tie", "changed"))
        page.click("#evidence button[data-key=moved][data-value=any]")
        assert _visible(page) == moved < total
        count = page.evaluate("document.querySelector('#evidence .ev-count').textContent")
        assert count == f"{moved} of {total} rows shown"
        page.click("#evidence button[data-key=moved][data-value='']")
        assert _visible(page) == total
        # Filters combine: one condition, then only the rows that did not move.
        condition = page.evaluate("document.querySelector('#evidence tbody tr').dataset.condition")
        page.click(f"#evidence button[data-key=condition][data-value='{condition}']")
        in_condition = _visible(page)
        assert 0 < in_condition <= total
        page.click("#evidence button[data-key=moved][data-value=same]")
        assert _visible(page) == page.evaluate(
            "document.querySelectorAll('#evidence tbody tr[data-moved=same]"
            f"[data-condition={condition}]').length"
        )
        # A link can open a filtered view.
        page.goto(report.resolve().as_uri() + "#ev?moved=any")
        assert _visible(page) == moved
        assert tab.errors == []


def _rows_by_move(report: Path) -> dict[str, int]:
    html = report.read_text()
    return {
        m: html.count(f"data-moved='{m}'") for m in set(re.findall(r"data-moved='(\w+)'", html))
    }


def test_clicking_a_filter_changes_the_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chromium.browser()  # skip early without it
    monkeypatch.setattr(compose, "default_drift", lambda: (lexical_drift, "delta_e_same_lexical"))
    run = run_dir(tmp_path / "run", judgments())
    report = run_report(load_run(run), load_lexicons(None), resamples=200)
    check_browser_filters(report)


# Sensitivity: items 0-3 prefer the intact text, 4-7 the degraded copy (shown as B), 8 Tie.
DEGRADED = ["A"] * 4 + ["B"] * 4 + ["Tie"] + ["Invalid"]


def _checks() -> pl.DataFrame:
    """The sweep's checks of each degraded copy, as degrade_checks.csv holds them."""
    return pl.DataFrame(
        {
            "condition": ["DegradedNumber"] * 10,
            "item_id": [f"doc-{i:02d}" for i in range(10)],
            "kind": ["number"] * 10,
            "degraded": ["B"] * 10,
            "before": ["12"] * 9 + ["the <b>council</b> met"],
            "after": ["24"] * 9 + [""],
            "verified": [True] * 10,
        }
    )


def _with_degraded() -> pl.DataFrame:
    j = table(rows(BLIND), rows(DEGRADED, "DegradedNumber"))
    sens = pl.col("condition") == "DegradedNumber"  # the copy's side, as the sweep records it
    return j.with_columns(degraded=pl.when(sens).then(pl.lit("B")).otherwise(pl.lit("")))


def test_a_degraded_pair_shows_its_changed_fact_and_which_text_won() -> None:
    r = browser_rows(_with_degraded(), checks=_checks())
    sens = r.filter(pl.col("condition") == "DegradedNumber")
    assert dict(sens.group_by("moved").len().iter_rows()) == {
        "read": 4, "misread": 4, "even": 1, "unpaired": 1}  # fmt: skip
    assert r["moved"].head(4).to_list() == ["misread"] * 4  # the telling rows first
    page = browser_html(r)
    assert "copy shown as B (in candidate 2's place)<br>number: <span class='change'>" in page
    assert "<del>12</del> → <ins>24</ins>" in page
    assert "dropped: <del>the &lt;b&gt;council&lt;/b&gt; met</del>" in page  # escaped
    assert "preferred the degraded copy (4)" in page
    # Without the checks the row says the change was not recorded, and still who won.
    bare = browser_html(browser_rows(_with_degraded()))
    assert "change not recorded (degrade_checks.csv)" in bare
    assert "preferred the intact text (4)" in bare


def test_the_report_reads_the_checks_beside_the_judgments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compose, "default_drift", lambda: (lexical_drift, "delta_e_same_lexical"))
    run = run_dir(tmp_path / "run", _with_degraded())
    _checks().write_csv(run / "degrade_checks.csv")
    report = run_report(load_run(run), load_lexicons(None), resamples=100)
    assert "<del>12</del> → <ins>24</ins>" in report.read_text(encoding="utf-8")
