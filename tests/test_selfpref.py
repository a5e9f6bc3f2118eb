"""Self-preference: the items from two candidate sets, and the 2 × 3 table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.metrics.selfpref import UNLABELLED, self_preference
from judgeprobe.report.selfpref import selfpref_sections
from judgeprobe.selfpref.__main__ import main as selfpref_main
from judgeprobe.selfpref.from_sets import self_preference_items


def _set(rows: list[tuple[str, str, str, str]]) -> pl.DataFrame:
    cols = ["doc_id", "subset", "candidate_1", "generator_1"]
    frame = pl.DataFrame(rows, schema=cols, orient="row")
    return frame.with_columns(document=pl.lit("Doc ") + pl.col("doc_id"))


OWN = _set([("d1", "identical", "mine 1", "llm:judge"), ("d2", "identical", "mine 2", "llm:judge"),
            ("d1", "same_model", "draw", "llm:judge")])  # fmt: skip
OTHER = _set([("d1", "identical", "theirs 1", "llm:other"), ("d2", "identical", "theirs 2",
              "llm:other"), ("d3", "identical", "theirs 3", "llm:other"),
              ("d1", "eq_pair", "theirs 1 in my words", "llm:judge")])  # fmt: skip


def test_items_pair_the_judges_text_with_the_others_per_shared_document() -> None:
    items = self_preference_items(OWN, OTHER)
    got = [(i["item_id"], i["candidate_1"], i["candidate_2"]) for i in items]
    assert got == [
        ("d1/self_vs_other", "mine 1", "theirs 1"),
        ("d1/self_style", "theirs 1 in my words", "theirs 1"),
        ("d2/self_vs_other", "mine 2", "theirs 2"),
    ]
    assert {(i["generator_1"], i["generator_2"]) for i in items} == {("llm:judge", "llm:other")}
    assert {i["document_id"] for i in items} == {"d1", "d2"}


def test_items_refuse_sets_that_do_not_fit_in_one_line() -> None:
    by_someone = OTHER.with_columns(
        generator_1=pl.when(pl.col("subset") == "eq_pair").then(pl.lit("llm:x"))
        .otherwise(pl.col("generator_1"))
    )  # fmt: skip
    with pytest.raises(JudgeprobeError, match="rewrites are by"):
        self_preference_items(OWN, by_someone)
    with pytest.raises(JudgeprobeError, match="need one author"):
        self_preference_items(OWN, OWN)
    with pytest.raises(JudgeprobeError, match="not a candidate set"):
        self_preference_items(OWN.drop("generator_1"), OTHER)


def _judgment(condition: str, d: int, subset: str, order: str, verdict: str) -> dict[str, Any]:
    return {
        "run_id": "t", "judge": "j", "protocol": "baseline", "condition": condition,
        "item_id": f"d{d}/{subset}", "subset": subset, "document_id": f"d{d}", "order": order,
        "seed": 0, "verdict": verdict, "target": {"Blind": "none", "SelfOwn": "A"}.get(
            condition, "B"),
    }  # fmt: skip


def test_the_unlabelled_preference_and_each_label_are_reported_apart() -> None:
    """Own text wins 3 of 4 unlabelled (style control: a Tie and a win, 0.75); the true label
    adds a win on one pair (+0.25); the false label takes one away (−0.25)."""
    blind = {("self_vs_other", "12"): "A", ("self_vs_other", "21"): "A",
             ("self_style", "12"): "Tie", ("self_style", "21"): "A"}  # fmt: skip
    rows = []
    for d in range(4):
        for (subset, order), verdict in blind.items():
            v = verdict if d else {"A": "B", "Tie": "B"}[verdict]  # d0: the other text wins
            rows.append(_judgment("Blind", d, subset, order, v))
            rows.append(_judgment("SelfOwn", d, subset, order, "A" if d == 0 else v))
            rows.append(_judgment("SelfOther", d, subset, order, "B" if d == 1 else v))
    table = self_preference(pl.DataFrame(rows), resamples=200)
    got = {(r["subset"], r["measure"]): r["value"] for r in table.iter_rows(named=True)}
    assert got[("self_vs_other", UNLABELLED)] == pytest.approx(6 / 8)
    assert got[("self_style", UNLABELLED)] == pytest.approx((3 * 1.5) / 8)
    assert got[("self_vs_other", "label on its own text")] == pytest.approx(2 / 8)
    assert got[("self_vs_other", "label on the other's text")] == pytest.approx(-2 / 8)
    assert got[("self_style", "label on the other's text")] == pytest.approx(-1.5 / 8)
    (section,) = selfpref_sections(pl.DataFrame(rows), 200, 0)
    assert "0.750" in section.sentences[0]
    assert selfpref_sections(pl.DataFrame(rows).with_columns(subset=pl.lit("eq_pair")), 9, 0) == []


def test_cli_writes_the_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    OWN.write_parquet(tmp_path / "own.parquet")
    OTHER.write_parquet(tmp_path / "other.parquet")
    out = tmp_path / "new" / "items.jsonl"
    args = [str(tmp_path / "own.parquet"), str(tmp_path / "other.parquet"), "--out", str(out)]
    assert selfpref_main(args) == 0
    assert len(out.read_text().splitlines()) == 3
    assert "self_vs_other 2, self_style 1" in capsys.readouterr().out
