"""A judge that never reads (always "Summary 1", or always Tie) never gets CLEAR: run under
Blind/True/Flip/Placebo with the sensitivity conditions, its cue rows would be CLEAR on their
own (nothing moves, and 200 documents give the power), but its sensitivity row is INSENSITIVE
and so are they."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from judgeprobe.card.from_run import card_for_run
from judgeprobe.card.rows import EXIT_INSENSITIVE
from judgeprobe.cue.run import main as run_main
from judgeprobe.selftest.synthetic import write_items
from tests.conftest import write_config
from tests.fakeserver import FakeJudge

CONDITIONS = ["Blind", "True", "Flip", "Placebo", "DegradedNumber", "DegradedEntity",
              "DegradedNegation", "DegradedSentence"]  # fmt: skip
V1 = Path(__file__).resolve().parents[1] / "judgeprobe" / "card" / "thresholds_v1.toml"


@pytest.mark.parametrize("reply", ["[1,2]", "Tie"])
def test_a_judge_that_never_reads_is_never_clear(tmp_path: Path, reply: str) -> None:
    items = write_items(tmp_path / "items.jsonl", 200)
    with FakeJudge(verdict=reply) as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, name="blind",
                           conditions=CONDITIONS, protocols=["baseline"])  # fmt: skip
        out = tmp_path / "run"
        assert run_main(["--config", str(cfg), "--out", str(out), "--no-progress"]) == 0
    judgments = pl.read_parquet(out / "judgments.parquet")
    degraded = judgments.filter(pl.col("degraded") != "")
    assert set(degraded["condition"]) == {"DegradedNumber", "DegradedNegation"}  # the rest skip
    checks = pl.read_csv(out / "degrade_checks.csv", infer_schema=False)
    assert checks.filter(pl.col("verified") == "true").height == degraded.height
    card = card_for_run(out, resamples=300)
    verdicts = dict(card.rows.select("row", "verdict").iter_rows())
    assert verdicts["sensitivity"] == "INSENSITIVE"
    assert "CLEAR" not in verdicts.values(), verdicts
    assert card.exit_code == EXIT_INSENSITIVE
    # The same run under the version-1 thresholds (no sensitivity gate): CLEAR, as the issue saw.
    old = card_for_run(out, thresholds=V1, resamples=300)
    assert "CLEAR" in set(old.rows["verdict"])


def test_sensitivity_cells_are_not_counted_as_cue_cells_in_the_headline(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", 30)
    with FakeJudge(verdict="[1,2]") as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, name="blind",
                           conditions=CONDITIONS, protocols=["baseline"])  # fmt: skip
        out = tmp_path / "run"
        assert run_main(["--config", str(cfg), "--out", str(out), "--no-progress"]) == 0
    report = (out / "report.md").read_text()
    assert "no verdict changed against Blind in 3 readable cue cells" in report
