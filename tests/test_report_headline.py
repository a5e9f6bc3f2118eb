"""The report's headline sentences, from hand-made judgments tables (no server)."""

from __future__ import annotations

import re

import polars as pl

from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.metrics.drift import lexical_drift
from judgeprobe.metrics.flags import Readability
from judgeprobe.report.headline import headline, unreadable
from judgeprobe.text.lexicons import load_lexicons
from tests.reportdata import rows, table


def sentences(j: pl.DataFrame) -> list[str]:
    tidy = compute_metrics(j, load_lexicons(None), lexical_drift, resamples=300, seed=0)
    return headline(j, tidy)


def one(found: list[str], start: str) -> str:
    (hit,) = [s for s in found if start in s]
    return hit


BLIND = ["B"] * 14 + ["A"] * 4 + ["Tie"] * 2  # 20 items, no habit of 80% or more


def test_a_judge_that_always_says_tie_is_named_before_any_cue_effect() -> None:
    j = table(rows(["Tie"] * 39 + ["A"]), rows(["Tie"] * 40, "True"))
    found = sentences(j)
    assert found[0].startswith("⚠ j (baseline) answered Tie in 39 of 40 valid Blind judgments")
    assert "(first-shown 1, second-shown 0, Tie 39)" in found[0]
    # The only move (item 39: A → Tie) is within noise, and the report says so plainly.
    assert found[1].startswith("Nothing moved beyond noise in 1 readable cue cell:")


def test_position_preference_is_counted_in_screen_terms() -> None:
    # Candidate A shown first for 20 items, candidate B shown first for 17: 33 of 39 valid
    # verdicts pick whatever was shown first; one judgment is Invalid.
    first = rows(["A"] * 20) + rows(["B"] * 13 + ["A"] * 4 + ["Tie"] * 2 + ["Invalid"], order="21")
    for i, r in enumerate(first[20:]):
        r["item_id"] = f"doc-{20 + i:02d}"
    j = table(first)
    found = sentences(j)
    assert found[0].startswith(
        "⚠ j (baseline) picked the first-shown summary in 33 of 39 valid Blind judgments "
        "(first-shown 33, second-shown 4, Tie 2; 1 of 40 Invalid)"
    )
    assert found[1] == (
        "This run has no cue condition: only the judges' Blind behaviour can be read."
    )


def test_a_balanced_judge_gets_a_plain_count() -> None:
    found = sentences(table(rows(["A"] * 8 + ["B"] * 7 + ["Tie"] * 5)))
    assert found[0] == (
        "j (baseline) without a cue preferred the first-shown summary 8 times, the "
        "second-shown 7 and Tie 5, of 20 valid Blind judgments."
    )


def test_a_cue_effect_is_headlined_with_its_interval_and_target() -> None:
    true = ["A"] * 12 + BLIND[12:]  # items 0-11 move B → A (the LLM-labelled candidate)
    j = table(rows(BLIND), rows(true, "True"), rows(BLIND, "Placebo"))
    found = sentences(j)
    effect = one(found, "Under True")
    m = re.match(
        r"Under True, j \(baseline\) moved 60% \[(\d+), (\d+)\] of 20 paired items toward the "
        r"summary labelled “LLM”, 0% \[0, 0\] into Tie and 0% \[0, 0\] the other way; "
        r"LAO 1\.00 \[1\.00, 1\.00\]; sign test p < 0\.001\.$",
        effect,
    )
    assert m, effect
    lo, hi = int(m[1]), int(m[2])
    assert 0 < lo < 60 < hi <= 100
    assert "The 1 other readable cue cell moved no more than noise." in found
    assert not any("Placebo" in s for s in found)  # nothing moved there: not a finding
    # The judge's own habits come first.
    assert found.index(effect) > 0
    assert found[0].startswith("j (baseline) without a cue")


def test_a_style_attack_names_the_attacked_summary() -> None:
    j = table(
        rows(BLIND),
        rows(["A"] * 12 + BLIND[12:], "Verbosity", target="A", attack="verbosity"),
    )
    assert "toward the verbosity-attacked summary" in one(sentences(j), "Under Verbosity")


def test_nothing_moved_is_said_plainly() -> None:
    found = sentences(table(rows(BLIND), rows(BLIND, "True"), rows(BLIND, "Flip")))
    assert "Nothing moved: no verdict changed against Blind in 2 readable cue cells." in (found)


def test_moves_both_ways_are_noise_and_the_largest_is_shown_for_context() -> None:
    # Two items move toward the target (B → A), two away (A → B): no direction beyond chance.
    true = ["A", "A", *BLIND[2:16], "B", "B", *BLIND[18:]]
    found = sentences(table(rows(BLIND), rows(true, "True")))
    noise = one(found, "Nothing moved beyond noise")
    assert "The largest change: Under True, j (baseline) moved 10% [" in noise
    assert "sign test p = 1.000" in noise
    assert not any(s.startswith("Under True") for s in found)


def test_thin_and_invalid_heavy_cells_stay_out_of_the_headline() -> None:
    thin = Readability().min_n - 1
    j = table(
        rows(["B"] * thin, judge="thin"),
        rows(["A"] * thin, "True", judge="thin"),  # every item moves toward the target
        rows(BLIND, judge="broken"),
        rows(["A"] * 12 + ["Invalid"] * 8, "True", judge="broken"),  # 40% Invalid
    )
    found = sentences(j)
    assert not any(s.startswith("Under True") for s in found)
    unread = one(found, "Not headlined, too thin to read:")
    assert "broken (baseline) under True" in unread
    assert "40% Invalid" in unread
    assert "thin (baseline) under True" in unread


def test_a_flag_column_in_the_table_decides_readability() -> None:
    assert unreadable({"n_paired": 3, "invalid_rate": 0.9, "flag": ""}) == ""
    assert unreadable({"n_paired": 500, "invalid_rate": 0.0, "flag": "custom"}) == "custom"
    limits = Readability(min_n=4, max_invalid_rate=0.4)
    assert unreadable({"n_paired": 3, "invalid_rate": 0.5}, limits) == (
        "3 paired items (< 4), 50% Invalid (> 40%)"
    )


def test_the_run_limits_decide_what_is_headlined() -> None:
    j = table(rows(["B"] * 6), rows(["A"] * 6, "True"))  # 6 of 6 move toward the target
    tidy = compute_metrics(j, load_lexicons(None), lexical_drift, resamples=300, seed=0)
    assert not any(s.startswith("Under True") for s in headline(j, tidy))  # 6 < 10 paired
    found = headline(j, tidy, Readability(min_n=5))
    assert one(found, "Under True").startswith("Under True, j (baseline) moved 100% [100, 100]")


def test_the_noise_floor_is_stated_and_not_taken_for_a_cue() -> None:
    repeat = ["Tie", "Tie", *BLIND[2:]]  # two of twenty verdicts change when re-sent
    j = table(rows(BLIND), rows(repeat, "BlindRepeat"))
    found = sentences(j)
    assert one(found, "Sent the same").startswith(
        "Sent the same Blind requests again, j (baseline) changed 10% ["
    )
    assert "of 20 verdicts: its own noise floor" in one(found, "Sent the same")
    assert "This run has no cue condition" in found[-1]
