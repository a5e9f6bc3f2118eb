"""Paired differences (judgeprobe.metrics.compare): metric(a) − metric(b) on shared units, a
document-level paired bootstrap and an exact sign test over documents, worked out by hand."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from scipy.stats import binomtest

from judgeprobe import JudgeprobeError
from judgeprobe.metrics.compare import paired_difference
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.text.lexicons import load_lexicons

LEX = load_lexicons()


def judgments(
    cells: dict[tuple[str, str, str], list[str]],
    docs: list[str] | None = None,
    target: str = "A",
) -> pl.DataFrame:
    """Verdicts per (judge, protocol, condition), item k of every cell in document docs[k]."""
    rows: list[dict[str, Any]] = []
    for (judge, protocol, condition), verdicts in cells.items():
        for k, v in enumerate(verdicts):
            rows.append(
                {
                    "judge": judge,
                    "protocol": protocol,
                    "condition": condition,
                    "subset": "s",
                    "item_id": f"i{k}",
                    "document_id": docs[k] if docs else f"d{k}",
                    "order": "12",
                    "seed": 0,
                    "verdict": v,
                    "target": "none" if condition == "Blind" else target,
                }
            )
    return pl.DataFrame(rows)


# Ten items, one per document. Blind is B throughout, so a move into A is an LDS unit.
#   item       0  1  2  3  4  5  6  7  8  9
#   baseline   A  A  A  A  A  A  A  B  B  Tie     LDS 6/10
#   pbp        A  B  B  B  B  B  B  B  B  Tie     LDS 1/10
# discordant: baseline-only LDS on items 1–6 (6), pbp-only none (0): Δ(pbp − baseline) =
# (0 − 6)/10 = −0.6; McNemar exact p = binomtest(0, 6) = 2/64.
BLIND = ["B"] * 10
BASE = ["A"] * 7 + ["B", "B", "Tie"]
PBP = ["A"] + ["B"] * 8 + ["Tie"]
CELLS = {
    ("g", "baseline", "Blind"): BLIND,
    ("g", "pbp", "Blind"): BLIND,
    ("g", "baseline", "True"): BASE,
    ("g", "pbp", "True"): PBP,
}


def test_protocol_difference_by_hand() -> None:
    d = paired_difference(
        judgments(CELLS), "LDS", ("g", "pbp", "True"), ("g", "baseline", "True"), resamples=2000
    )
    assert d.value_a == pytest.approx(0.1)
    assert d.value_b == pytest.approx(0.7)
    assert d.delta.value == pytest.approx(-0.6)
    assert (d.n, d.documents, d.a_more, d.b_more) == (10, 10, 0, 6)
    assert d.p == pytest.approx(2 / 64) == binomtest(0, 6).pvalue
    assert d.delta.lo is not None
    assert d.delta.hi is not None
    assert d.delta.lo <= -0.6 <= d.delta.hi < 0


def test_identical_arms_give_no_discordant_document_and_an_interval_around_zero() -> None:
    # Both arms measured on the same documents with the same verdicts: no document moved either
    # way, so the difference is 0 — and 0 of 10 discordant documents still leaves an interval
    # on both sides of 0 (the percentile bootstrap collapsed it to a point), symmetric and
    # no wider than 0 of 10 allows (Clopper–Pearson: 0.308).
    cells = {**CELLS, ("g", "pbp", "True"): BASE}
    d = paired_difference(judgments(cells), "LDS", ("g", "pbp", "True"), ("g", "baseline", "True"))
    assert (d.delta.value, d.a_more, d.b_more, d.p) == (0.0, 0, 0, None)
    assert d.delta.lo is not None
    assert d.delta.hi is not None
    assert d.delta.lo == pytest.approx(-d.delta.hi)
    assert 0 < d.delta.hi <= 1 - 0.025 ** (1 / 10) + 1e-12


def test_the_sign_test_counts_documents_not_items() -> None:
    # Items 0–7 come from two documents of four (all discordant one way) and items 8, 9
    # from one document each (concordant): two documents against none, p = 0.5 — not
    # the 8-of-8 items a unit-level McNemar would count (p = 2/256).
    cells = {**CELLS, ("g", "baseline", "True"): ["A"] * 8 + ["B", "Tie"],
             ("g", "pbp", "True"): ["B"] * 8 + ["B", "Tie"]}  # fmt: skip
    docs = ["x"] * 4 + ["y"] * 4 + ["z", "w"]
    d = paired_difference(
        judgments(cells, docs), "LDS", ("g", "baseline", "True"), ("g", "pbp", "True"),
        resamples=500,
    )  # fmt: skip
    assert d.delta.value == pytest.approx(0.8)
    assert (d.n, d.documents, d.a_more, d.b_more) == (10, 4, 2, 0)
    assert d.p == 0.5


def test_only_units_valid_in_both_arms_are_compared() -> None:
    # Item 9 Invalid under pbp: 9 shared paired units remain.
    cells = {**CELLS, ("g", "pbp", "True"): [*PBP[:9], "Invalid"]}
    d = paired_difference(
        judgments(cells), "TS", ("g", "pbp", "True"), ("g", "baseline", "True"), resamples=200
    )
    assert d.n == 9
    assert d.delta.value == 0.0


def test_placebo_subtracted_effect_across_conditions() -> None:
    # LDS_True − LDS_Placebo for one judge and protocol: the function any two cells accept.
    cells = {**CELLS, ("g", "baseline", "Placebo"): ["A"] * 2 + ["B"] * 8}
    d = paired_difference(
        judgments(cells), "LDS", ("g", "baseline", "True"), ("g", "baseline", "Placebo"),
        resamples=200,
    )  # fmt: skip
    assert d.delta.value == pytest.approx(0.7 - 0.2)
    assert (d.a_more, d.b_more) == (5, 0)


def test_ratio_metrics_get_an_interval_but_no_sign_test() -> None:
    d = paired_difference(
        judgments(CELLS), "LAO", ("g", "pbp", "True"), ("g", "baseline", "True"), resamples=300
    )
    # pbp moved item 0 into A and item 9 into Tie: LAO 1/2; baseline 7 into A, 1 into Tie.
    assert (d.value_a, d.value_b, d.delta.value) == (0.5, 0.875, -0.375)
    assert d.p is None
    assert d.a_more is None


def test_bad_requests_are_clear_errors() -> None:
    j = judgments(CELLS)
    with pytest.raises(JudgeprobeError, match="unknown metric"):
        paired_difference(j, "LDSS", ("g", "pbp", "True"), ("g", "baseline", "True"))
    with pytest.raises(JudgeprobeError, match="no units in cell g/scot/True"):
        paired_difference(j, "LDS", ("g", "scot", "True"), ("g", "baseline", "True"))


def test_metrics_table_has_protocol_and_judge_differences() -> None:
    cells = {
        **CELLS,
        **{("h", p, c): v for (_, p, c), v in CELLS.items()},
        ("h", "baseline", "True"): ["A"] * 3 + ["B"] * 7,  # LDS 3/10
    }
    tidy = compute_metrics(judgments(cells), LEX, None, 500)
    diffs = tidy.filter(pl.col("versus").is_not_null())
    row = diffs.filter(
        (pl.col("judge") == "g") & (pl.col("metric") == "diff_LDS")
        & (pl.col("versus") == "protocol=baseline")
    ).row(0, named=True)  # fmt: skip
    assert (row["protocol"], row["condition"]) == ("pbp", "True")
    assert row["value"] == pytest.approx(-0.6)
    assert row["p"] == pytest.approx(2 / 64)
    assert (row["n"], row["documents"]) == (10, 10)
    # Judges: h − g under baseline (judges in name order: the later minus the earlier).
    row = diffs.filter(
        (pl.col("protocol") == "baseline") & (pl.col("metric") == "diff_LDS")
        & (pl.col("versus") == "judge=g")
    ).row(0, named=True)  # fmt: skip
    assert row["judge"] == "h"
    assert row["value"] == pytest.approx(0.3 - 0.7)
    # EDR and ND are compared under Blind only; LDS/TS/OLS/LAO under the probes.
    blind = set(diffs.filter(pl.col("condition") == "Blind")["metric"])
    assert blind == {"diff_EDR", "diff_ND"}
    probe = set(diffs.filter(pl.col("condition") == "True")["metric"])
    assert probe == {"diff_LDS", "diff_TS", "diff_OLS", "diff_LAO"}
    # Levels keep their rows, without versus.
    assert tidy.filter(pl.col("versus").is_null() & (pl.col("metric") == "LDS")).height == 4


def test_non_directional_cells_get_no_directional_difference() -> None:
    cells = {**CELLS}
    j = judgments(cells).with_columns(
        target=pl.when(pl.col("condition") == "True").then(pl.lit("none")).otherwise("target")
    )
    tidy = compute_metrics(j, LEX, None, 200)
    shown = set(tidy.filter(pl.col("versus").is_not_null())["metric"])
    assert "diff_LDS" not in shown
    assert "diff_TS" in shown


def test_bootstrap_interval_matches_a_naive_document_bootstrap() -> None:
    # 60 documents of 3 items, two protocols; resampling documents by hand (both arms with
    # the same draw) must give the same interval as the pooled, reduced draw (the percentile
    # method, kept to measure against); the default score interval holds the same estimate.
    rng = np.random.default_rng(11)
    n = 180
    docs = [f"d{k // 3}" for k in range(n)]
    base = rng.choice(["A", "B", "Tie"], size=n, p=[0.5, 0.3, 0.2]).tolist()
    pbp = rng.choice(["A", "B", "Tie"], size=n, p=[0.2, 0.3, 0.5]).tolist()
    cells = {("g", "baseline", "Blind"): ["B"] * n, ("g", "pbp", "Blind"): ["B"] * n,
             ("g", "baseline", "True"): base, ("g", "pbp", "True"): pbp}  # fmt: skip
    d = paired_difference(
        judgments(cells, docs), "LDS", ("g", "pbp", "True"), ("g", "baseline", "True"),
        resamples=20_000, seed=3, method="percentile",
    )  # fmt: skip
    score = paired_difference(
        judgments(cells, docs), "LDS", ("g", "pbp", "True"), ("g", "baseline", "True")
    )
    assert score.delta.value == d.delta.value
    assert score.delta.lo is not None
    assert score.delta.hi is not None
    assert d.delta.value is not None
    assert score.delta.lo < d.delta.value < score.delta.hi
    lds = np.array([[v == "A" for v in arm] for arm in (pbp, base)], dtype=float)
    per_doc = lds.reshape(2, 60, 3).sum(axis=2)  # LDS units per document, each arm
    draws = rng.integers(0, 60, size=(20_000, 60))
    delta = (per_doc[0][draws].sum(axis=1) - per_doc[1][draws].sum(axis=1)) / n
    lo, hi = np.percentile(delta, [2.5, 97.5])
    assert d.delta.value == pytest.approx(per_doc[0].sum() / n - per_doc[1].sum() / n)
    assert d.delta.lo == pytest.approx(lo, abs=0.01)
    assert d.delta.hi == pytest.approx(hi, abs=0.01)
