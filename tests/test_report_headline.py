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


NOT_READ = "Whether the judges read the texts is not measured: the run has no sensitivity"
NO_POSITION = "Position is not measured: no Blind item was judged in both orders"


def habits(found: list[str]) -> list[str]:
    """The sentences after the two controls a one-order table without sensitivity lacks."""
    assert found[0].startswith(NOT_READ), found[0]
    assert found[1].startswith(NO_POSITION), found[1]
    return found[2:]


BLIND = ["B"] * 14 + ["A"] * 4 + ["Tie"] * 2  # 20 items, no habit of 80% or more


def test_a_judge_that_always_says_tie_is_named_before_any_cue_effect() -> None:
    j = table(rows(["Tie"] * 39 + ["A"]), rows(["Tie"] * 40, "True"))
    found = habits(sentences(j))
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
    found = habits(sentences(j))
    assert found[0].startswith(
        "⚠ j (baseline) picked the first-shown summary in 33 of 39 valid Blind judgments "
        "(first-shown 33, second-shown 4, Tie 2; 1 of 40 Invalid)"
    )
    assert found[1] == (
        "This run has no cue condition: only the judges' Blind behaviour can be read."
    )


def test_a_balanced_judge_gets_a_plain_count() -> None:
    found = habits(sentences(table(rows(["A"] * 8 + ["B"] * 7 + ["Tie"] * 5))))
    assert found[0] == (
        "j (baseline) without a cue preferred the first-shown summary 8 times, the "
        "second-shown 7 and Tie 5, of 20 valid Blind judgments."
    )


def test_a_cue_effect_is_headlined_with_its_interval_and_target() -> None:
    true = ["A"] * 12 + BLIND[12:]  # items 0-11 move B → A (the LLM-labelled candidate)
    j = table(rows(BLIND), rows(true, "True"), rows(BLIND, "Placebo"))
    found = habits(sentences(j))
    effect = one(found, "Under True")
    m = re.match(
        r"Under True, j \(baseline\) moved 60% \[(\d+), (\d+)\] of 20 paired items toward the "
        r"summary labelled “LLM”, 0% \[0, 17\] into Tie and 0% \[0, 17\] the other way; "
        r"LAO 1\.00 \[0\.74, 1\.00\]; sign test p < 0\.001\.$",
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
    assert one(found, "Under True").startswith("Under True, j (baseline) moved 100% [54, 100]")


def test_the_noise_floor_is_stated_and_not_taken_for_a_cue() -> None:
    repeat = ["Tie", "Tie", *BLIND[2:]]  # two of twenty verdicts change when re-sent
    j = table(rows(BLIND), rows(repeat, "BlindRepeat"))
    found = sentences(j)
    assert one(found, "Sent the same").startswith(
        "Sent the same Blind requests again, j (baseline) changed 10% ["
    )
    assert "of 20 verdicts: its own noise floor" in one(found, "Sent the same")
    assert "This run has no cue condition" in found[-1]


def _sens(condition: str, value: float, lo: float, hi: float, p: float) -> dict[str, object]:
    """A SENS row of the tidy table, as the sensitivity metric writes it."""
    return {"judge": "j", "protocol": "baseline", "condition": condition, "metric": "SENS",
            "value": value, "lo": lo, "hi": hi, "n": 20, "documents": 20, "p": p}  # fmt: skip


def _with_sens(j: pl.DataFrame, *sens: dict[str, object]) -> list[str]:
    tidy = compute_metrics(j, load_lexicons(None), lexical_drift, resamples=300, seed=0)
    return headline(j, pl.concat([tidy, pl.DataFrame(list(sens))], how="diagonal_relaxed"))


def _first_shown_judge() -> list[dict[str, object]]:
    """20 Blind items in both orders, the first-shown summary chosen every time."""
    return rows(["A"] * 20) + rows(["B"] * 20, order="21")


def test_the_headline_leads_with_reading_then_position_then_cues() -> None:
    flip = ["B"] * 12 + ["A"] * 8  # items 0-11 move A → B, the Flip target
    degraded = rows(["A"] * 20, "DegradedNumber")  # no cue: a sensitivity cell
    j = table(_first_shown_judge(), rows(flip, "Flip"), degraded)
    found = _with_sens(
        j, _sens("DegradedNumber", 0.6, 0.3, 0.85, 0.002), _sens("Degraded", 0.6, 0.3, 0.85, 0.002)
    )
    assert found[0] == (
        "j (baseline) reads the texts: it preferred a summary to its copy with one fact made "
        "wrong, SENS 0.60 [0.30, 0.85] over 20 pairs, sign test p = 0.002; by kind: "
        "DegradedNumber 0.60."
    )
    assert found[1] == (
        "⚠ j (baseline) picks by position: of 20 Blind items judged in both orders, more got "
        "the first-shown summary both times than the other, first-shown excess 1.00 "
        "[0.76, 1.00], McNemar p < 0.001; it kept its verdict across orders on 0% [0, 17]."
    )
    assert found[2].startswith("⚠ j (baseline) picked the first-shown summary in 40 of 40")
    assert found[3].startswith("Under Flip, j (baseline) moved 60% [")
    # A sensitivity cell shows no cue: never a cue finding, never an unreadable cue cell.
    assert not any("DegradedNumber" in s for s in found[1:])


def test_a_judge_that_does_not_read_is_warned_first() -> None:
    j = table(_first_shown_judge(), rows(["A"] * 20, "DegradedNumber"))
    found = _with_sens(j, _sens("DegradedNumber", 0.0, -0.3, 0.3, 1.0))
    assert found[0] == (
        "⚠ j (baseline) did not tell a summary from its copy with one fact made wrong beyond "
        "chance (SENS 0.00 [-0.30, 0.30] over 20 pairs, sign test p = 1.000): a judge that "
        "does not read the texts moves with no cue, so its cue results below cannot show that "
        "it is fair."
    )
    assert found[1].startswith("⚠ j (baseline) picks by position")


def test_no_position_preference_is_said_plainly() -> None:
    # Items 0-4 get the first-shown both times, items 10-14 the second-shown: no excess.
    in_21 = ["B"] * 5 + ["A"] * 5 + ["A"] * 5 + ["B"] * 5
    found = sentences(table(rows(["A"] * 10 + ["B"] * 10), rows(in_21, order="21")))
    assert found[0].startswith(NOT_READ)
    m = re.fullmatch(
        r"j \(baseline\) shows no position preference beyond chance: first-shown excess 0\.00 "
        r"\[(-0\.\d\d), (0\.\d\d)\], McNemar p = 1\.000 over 20 Blind items judged in both "
        r"orders; it kept its "
        r"verdict across orders on 50% \[\d+, \d+\]\.",
        found[1],
    )
    assert m, found[1]
    assert float(m[1]) < 0 < float(m[2])


def test_a_lean_the_exact_test_does_not_carry_is_not_a_finding() -> None:
    # The demo's pattern at 10 documents: 7 items first-shown both times, 1 second-shown, 2 the
    # same candidate. The bootstrap interval clears 0, McNemar's exact test (the card's) does not.
    in_12, in_21 = ["A"] * 7 + ["B"] + ["A"] * 2, ["B"] * 7 + ["A"] + ["A"] * 2
    found = sentences(table(rows(in_12), rows(in_21, order="21")))
    (position,) = [s for s in found if "first-shown excess" in s]
    assert position.startswith(
        "j (baseline) leans to the first-shown summary, not beyond chance: first-shown excess "
        "0.60 ["
    ), position
    assert ", McNemar p = 0.070 over 10 Blind items judged in both orders" in position
    assert "⚠" not in position


def test_evidence_that_cannot_discriminate_is_flagged_beside_fabrication() -> None:
    j = table(
        rows(BLIND, protocol="pbp", n_quotes=8, n_fabricated=0, n_criteria=4,
             n_nondiscriminating=4),
        rows(BLIND, judge="k", protocol="pbp", n_quotes=8, n_fabricated=0, n_criteria=4,
             n_nondiscriminating=1),  # 25%
    )  # fmt: skip
    found = sentences(j)
    assert one(found, "quoted evidence") == (
        "⚠ j (pbp) quoted evidence that cannot tell the candidates apart in 100% [83, 100] of "
        "its criteria (20 items) under Blind (the same quotes for both, or none from either "
        "summary); its fabrication rate there, 0% [0, 17], says nothing about whether its "
        "evidence separates the texts."
    )
