"""Transitions of counterfactual pairs, against the check values in docs/metrics.md."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from judgeprobe.report.rubric import rubric_sections
from judgeprobe.rubric.sweep import pairs_from
from judgeprobe.rubric.transitions import transition_table
from judgeprobe.runs.rundir import RunDir


def _pairs(groups: list[tuple[str, str, str | None, int]], judge: str = "j") -> pl.DataFrame:
    """(before, after, expected, count) groups → one pair per item."""
    rows: list[dict[str, object]] = []
    for before, after, expected, count in groups:
        for _ in range(count):
            rows.append(
                {
                    "judge": judge,
                    "perturbation": "p",
                    "item_id": f"i{len(rows)}",
                    "seed": 0,
                    "before": before,
                    "after": after,
                    "expected": expected,
                }
            )
    return pl.DataFrame(rows, schema_overrides={"expected": pl.String})


def _by_transition(table: pl.DataFrame) -> dict[str, tuple[int, float]]:
    rows = table.iter_rows(named=True)
    return {r["transition"]: (r["count"], round(r["percent"], 1)) for r in rows}


def test_output_perturbation_check_values() -> None:
    # docs/metrics.md / paper Table 5: 186 / 88 / 107 / 112 of 493 valid pairs.
    pairs = _pairs(
        [
            ("satisfied", "violated", "satisfied", 186),
            ("violated", "satisfied", "satisfied", 88),
            ("satisfied", "satisfied", "satisfied", 107),
            ("violated", "violated", "satisfied", 112),
            ("Invalid", "violated", "satisfied", 5),  # not valid pairs: left out of the shares
            ("satisfied", "Invalid", "satisfied", 2),
        ]
    )
    table = transition_table(pairs, resamples=500)
    assert _by_transition(table) == {
        "Desired flip": (186, 37.7),
        "Wrong-direction flip": (88, 17.8),
        "Sticky satisfy": (107, 21.7),
        "Sticky violate": (112, 22.7),
    }
    assert set(table["valid_pairs"]) == {493}
    assert set(table["pairs"]) == {500}
    assert (table["lo"] <= table["percent"]).all()
    assert (table["percent"] <= table["hi"]).all()
    assert (table["hi"] - table["lo"] > 1).all()  # a real interval, not a point


@pytest.mark.parametrize(
    ("s2v", "v2s", "sticky_s", "sticky_v", "shares"),
    [
        (125, 43, 8, 824, (16.8, 0.8, 82.4)),  # Gemma, Table 6: 1000 pairs
        (252, 70, 31, 646, (32.2, 3.1, 64.7)),  # LLaMA, Table 6: 999 pairs
    ],
)
def test_criterion_perturbation_check_values(
    s2v: int, v2s: int, sticky_s: int, sticky_v: int, shares: tuple[float, float, float]
) -> None:
    # No expected verdict: either flip is desired, and the two directions are shown apart.
    pairs = _pairs(
        [
            ("satisfied", "violated", None, s2v),
            ("violated", "satisfied", None, v2s),
            ("satisfied", "satisfied", None, sticky_s),
            ("violated", "violated", None, sticky_v),
        ]
    )
    table = transition_table(pairs, resamples=200)
    assert _by_transition(table) == {
        "Desired flip": (s2v + v2s, shares[0]),
        "Sticky satisfy": (sticky_s, shares[1]),
        "Sticky violate": (sticky_v, shares[2]),
    }
    desired = table.filter(pl.col("transition") == "Desired flip")
    assert desired["detail"].item() == f"{s2v} S→V + {v2s} V→S"


def test_a_flip_towards_the_expected_verdict_is_wrong_direction() -> None:
    # The original was expected to be violated: violated → satisfied is the desired flip.
    table = transition_table(
        _pairs(
            [("violated", "satisfied", "violated", 3), ("satisfied", "violated", "violated", 1)]
        ),
        resamples=100,
    )
    assert _by_transition(table)["Desired flip"] == (3, 75.0)
    assert _by_transition(table)["Wrong-direction flip"] == (1, 25.0)


def test_seeds_of_one_item_are_resampled_together() -> None:
    rows = [
        {
            "judge": "j",
            "perturbation": "p",
            "item_id": f"i{i // 2}",
            "seed": i % 2,
            "before": "satisfied",
            "after": "violated" if i < 10 else "satisfied",
            "expected": None,
        }
        for i in range(20)
    ]
    table = transition_table(pl.DataFrame(rows), resamples=300)
    assert _by_transition(table)["Desired flip"] == (10, 50.0)
    assert set(table["valid_pairs"]) == {20}


def test_pairs_from_judgments_only_directs_response_reversal() -> None:
    base = {"judge": "j", "item_id": "a", "seed": 0, "expected": "satisfied"}
    judgments = pl.DataFrame(
        [
            {**base, "variant": "original", "verdict": "satisfied"},
            {**base, "variant": "reversed_response", "verdict": "violated"},
            {**base, "variant": "negated_criterion", "verdict": "satisfied"},
        ]
    )
    pairs = pairs_from(judgments).sort("perturbation")
    assert pairs["perturbation"].to_list() == ["criterion", "response"]
    assert pairs["expected"].to_list() == [None, "satisfied"]
    assert pairs["before"].to_list() == ["satisfied", "satisfied"]
    assert pairs["after"].to_list() == ["satisfied", "violated"]


def test_a_run_written_before_the_transition_rename_still_renders(tmp_path: Path) -> None:
    """transitions.csv from before 'outcome' became 'transition' gives the same section."""
    folder = RunDir(tmp_path).rubric.path
    folder.mkdir()
    row = {"judge": "j", "perturbation": "response_reversal", "count": 3, "percent": 30.0,
           "lo": 10.0, "hi": 50.0, "detail": "", "valid_pairs": 10}  # fmt: skip
    pl.DataFrame([{**row, "outcome": "wrong direction"}]).write_csv(folder / "transitions.csv")
    old = rubric_sections(RunDir(tmp_path))
    pl.DataFrame([{**row, "transition": "wrong direction"}]).write_csv(folder / "transitions.csv")
    assert [s.title for s in old] == [s.title for s in rubric_sections(RunDir(tmp_path))]
    assert any("wrong direction" in t["transition"].to_list() for s in old for t in s.tables)
