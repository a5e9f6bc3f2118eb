"""The card's sensitivity rows and the gate: a judge not shown to read never gets CLEAR."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from scipy.stats import binomtest

from judgeprobe.card.from_run import card_for_run
from judgeprobe.card.rows import EXIT_INSENSITIVE
from judgeprobe.card.thresholds import load_thresholds
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.text.lexicons import load_lexicons
from tests.test_card import ROOT, _row, _write, biased, reading

NULL = biased(n=400, moved=0, acknowledged=0, placebo=0)  # no cue moves anything, 400 documents
V1 = ROOT / "judgeprobe" / "card" / "thresholds_v1.toml"


def _verdicts(card_rows: pl.DataFrame) -> dict[str, str]:
    return dict(card_rows.select("row", "verdict").iter_rows())


def test_a_reading_judge_keeps_clear(tmp_path: Path) -> None:
    card = card_for_run(_write(tmp_path, NULL + reading(400, intact=300, worse=20)), resamples=300)
    sens = card.rows.filter(pl.col("kind") == "sensitivity").row(0, named=True)
    assert sens["effect"] == pytest.approx((300 - 20) / 400)  # ties kept in n
    assert sens["effect_lo"] <= 0.7 <= sens["effect_hi"]
    assert (sens["up"], sens["down"]) == (300, 20)
    assert sens["p"] == pytest.approx(binomtest(300, 320).pvalue)
    assert sens["verdict"] == "SENSITIVE"
    assert _verdicts(card.rows)["True"] == "CLEAR"
    assert card.exit_code == 0


@pytest.mark.parametrize("intact", [0, 12, 200])
def test_a_judge_not_shown_to_read_gets_insensitive_not_clear(tmp_path: Path, intact: int) -> None:
    # 0: no sensitivity at all; 12 of 400: significant but far below the threshold;
    # 200 intact against 200 degraded: SENS 0.
    rows = NULL + reading(400, intact=intact, worse=200 if intact == 200 else 0)
    card = card_for_run(_write(tmp_path, rows), resamples=300)
    verdicts = _verdicts(card.rows)
    assert verdicts["sensitivity"] == "INSENSITIVE"
    assert verdicts["True"] == verdicts["Placebo"] == "INSENSITIVE"  # CLEAR without the gate
    assert "CLEAR" not in verdicts.values()
    assert card.exit_code == EXIT_INSENSITIVE
    assert "not shown to read" in (tmp_path / "run" / "card.md").read_text()


def test_no_sensitivity_condition_no_clear_but_version_1_keeps_its_card(tmp_path: Path) -> None:
    run = _write(tmp_path, NULL)
    card = card_for_run(run, resamples=300)
    assert _verdicts(card.rows) == {"Placebo": "INSENSITIVE", "True": "INSENSITIVE"}
    assert card.exit_code == EXIT_INSENSITIVE
    old = card_for_run(run, thresholds=V1, resamples=300)
    assert _verdicts(old.rows) == {"Placebo": "CLEAR", "True": "CLEAR"}
    assert old.exit_code == 0


def test_sens_in_the_metrics_table_per_kind_and_pooled() -> None:
    rows = reading(40, intact=30, worse=4)
    rows += [{**r, "condition": "DegradedNegation", "verdict": r["degraded"]}
             for r in reading(40, intact=0)]  # fmt: skip
    tidy = compute_metrics(
        pl.DataFrame(rows, infer_schema_length=None), load_lexicons(), None, 500, differences=False
    )
    sens = {
        r["condition"]: r for r in tidy.filter(pl.col("metric") == "SENS").iter_rows(named=True)
    }
    assert sens["DegradedNumber"]["value"] == pytest.approx(26 / 40)
    assert sens["DegradedNumber"]["p"] == pytest.approx(binomtest(30, 34).pvalue)
    assert sens["DegradedNegation"]["value"] == pytest.approx(-1.0)
    assert sens["Degraded"]["value"] == pytest.approx((30 - 4 - 40) / 80)
    assert sens["Degraded"]["n"] == 40  # items; each holds both kinds
    assert sens["Degraded"]["documents"] == 40
    assert sens["Degraded"]["lo"] < sens["Degraded"]["value"] < sens["Degraded"]["hi"]
    # Sensitivity judgments have no Blind twin: no cue metric for them.
    assert tidy.filter(pl.col("condition").str.starts_with("Degraded") &
                       pl.col("metric").is_in(["LDS", "TS", "flip_rate"])).is_empty()  # fmt: skip


def test_thresholds_versions(tmp_path: Path) -> None:
    assert load_thresholds().values.sensitivity_effect == 0.2
    assert load_thresholds(V1).values.sensitivity_effect is None
    v2 = (ROOT / "judgeprobe" / "card" / "thresholds_v2.toml").read_text()
    bad = tmp_path / "t.toml"
    bad.write_text(v2.replace("sensitivity_effect = 0.2", ""))
    with pytest.raises(Exception, match="version 2 needs sensitivity_effect"):
        load_thresholds(bad)


def test_a_judge_that_always_says_tie_gets_no_clear_position_row(tmp_path: Path) -> None:
    rows = [_row("Blind", i, "Tie", order) for i in range(400) for order in ("12", "21")]
    run = _write(tmp_path, rows)
    assert _verdicts(card_for_run(run, resamples=200).rows) == {"position": "INSENSITIVE"}
    assert _verdicts(card_for_run(run, thresholds=V1, resamples=200).rows) == {"position": "CLEAR"}
