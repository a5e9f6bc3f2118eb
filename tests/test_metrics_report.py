"""The report's metric tables: Table IX per extractive method, the paired differences table
and the breakdowns by domain or subset, from hand-made judgments."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from judgeprobe.core.cells import p_value
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.render.tables import (
    breakdown_table,
    differences_table,
    provenance_table,
)
from judgeprobe.text.lexicons import load_lexicons

LEX = load_lexicons()


def _row(**kw: Any) -> dict[str, Any]:
    base = {
        "judge": "g",
        "protocol": "baseline",
        "condition": "Blind",
        "subset": "llm_vs_extractive",
        "order": "12",
        "seed": 0,
        "target": "none",
        "source_1": "LLM",
        "source_2": "TradML",
        "generator_1": "llm:gemma3-270m",
        "domain": "science",
    }
    return base | kw


def test_table_ix_has_one_row_per_extractive_method() -> None:
    # Two documents, each with the LLM summary against four extractive summaries; the LLM
    # wins against all but SumBasic (Tie on d0, loses on d1). An eq_pair item (both LLM
    # paraphrases under the nominal labels LLM/TradML) is not an LLM-vs-other comparison.
    rows = [
        _row(
            item_id=f"{d}/{m}",
            document_id=d,
            generator_2=f"sumy:{m}",
            verdict={"sumbasic": {"d0": "Tie", "d1": "B"}[d]}.get(m, "A"),
        )
        for d in ("d0", "d1")
        for m in ("textrank", "lexrank", "klsum", "sumbasic")
    ]
    rows.append(
        _row(item_id="d0/eq", document_id="d0", subset="eq_pair",
             generator_2="llm:gemma3-270m", verdict="B")
    )  # fmt: skip
    table = provenance_table(pl.DataFrame(rows), 200, 0)
    assert table["versus"].to_list() == ["KL-Sum", "LexRank", "SumBasic", "TextRank"]
    sumbasic = table.filter(pl.col("versus") == "SumBasic").row(0, named=True)
    assert (sumbasic["prefers_LLM"], sumbasic["Tie"], sumbasic["prefers_other"]) == (0, 1, 1)
    assert table.filter(pl.col("versus") == "TextRank")["prefers_LLM"].item() == 2
    assert set(table["documents"]) == {2}


def test_table_ix_without_generators_falls_back_to_the_label() -> None:
    rows = [
        _row(item_id=f"i{k}", document_id=f"d{k}", generator_1=None, generator_2=None,
             verdict="A")
        for k in range(3)
    ]  # fmt: skip
    table = provenance_table(pl.DataFrame(rows), 100, 0)
    assert table["versus"].to_list() == ["TradML"]
    assert table["prefers_LLM"].item() == 3


def _cells(verdicts: dict[tuple[str, str], list[str]], domains: list[str]) -> pl.DataFrame:
    rows = [
        _row(
            protocol=protocol,
            condition=condition,
            item_id=f"i{k}",
            document_id=f"d{k}",
            domain=domains[k],
            verdict=v,
            target="none" if condition == "Blind" else "A",
        )
        for (protocol, condition), vs in verdicts.items()
        for k, v in enumerate(vs)
    ]
    return pl.DataFrame(rows)


VERDICTS = {
    ("baseline", "Blind"): ["B", "B", "B", "B"],
    ("pbp", "Blind"): ["B", "B", "B", "Tie"],
    ("baseline", "True"): ["A", "A", "A", "B"],  # LDS 3/4
    ("pbp", "True"): ["A", "B", "B", "Tie"],  # LDS 1/4
}
DOMAINS = ["science", "science", "business", "business"]


def test_differences_table_shows_the_difference_and_its_test() -> None:
    tidy = compute_metrics(_cells(VERDICTS, DOMAINS), LEX, None, 300)
    table = differences_table(tidy)
    lds = table.filter(pl.col("metric") == "LDS").row(0, named=True)
    assert (lds["protocol"], lds["versus"]) == ("pbp", "protocol=baseline")
    assert lds["difference"].startswith("-0.500 [")  # LDS 1/4 − 3/4
    assert lds["p"] == p_value(0.5) == "0.500"  # two documents one way, none the other
    assert (lds["n"], lds["documents"]) == (4, 4)
    assert set(table["metric"]) == {"EDR", "ND", "LDS", "TS", "OLS", "LAO"}


def test_p_values_print_as_the_card_prints_them() -> None:
    shown = [p_value(p) for p in (None, float("nan"), 0.0004, 0.001, 0.03125, 1.0)]
    assert shown == ["–", "–", "< 0.001", "0.001", "0.031", "1.000"]


def test_breakdown_by_domain_matches_each_domain_alone() -> None:
    j = _cells(VERDICTS, DOMAINS)
    tidy = compute_metrics(j, LEX, None, 200, by="domain", differences=False)
    assert tidy.columns[0] == "domain"
    table = breakdown_table(tidy, "domain", ["EDR", "LDS"])
    assert table.columns == ["domain", "judge", "protocol", "condition", "EDR", "LDS"]
    alone = compute_metrics(
        j.filter(pl.col("domain") == "business"), LEX, None, 200, differences=False
    )
    for metric in ("LDS", "EDR"):
        got = tidy.filter((pl.col("domain") == "business") & (pl.col("metric") == metric)).drop(
            "domain"
        )
        want = alone.filter(pl.col("metric") == metric)
        assert got.equals(want)
    pbp_true = table.filter(
        (pl.col("domain") == "business") & (pl.col("protocol") == "pbp")
        & (pl.col("condition") == "True")
    )  # fmt: skip
    assert pbp_true["LDS"].item().startswith("0.000")  # i2: B→B, i3: Tie→Tie


def test_breakdown_rejects_an_unknown_column() -> None:
    with pytest.raises(ValueError, match="breakdown by 'judge'"):
        compute_metrics(_cells(VERDICTS, DOMAINS), LEX, None, 10, by="judge")
