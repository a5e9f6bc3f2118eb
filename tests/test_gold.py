"""Gold (docs/metrics.md, "Gold"): ACC, SENS_gold and the length baselines on hand-made tables,
and the card's accuracy row, which no judge earns without reading the content."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from judgeprobe.card.from_run import card_for_run
from judgeprobe.card.kinds.reading import AccuracyRow
from judgeprobe.card.record import CardRow, Estimate
from judgeprobe.card.render import display, rule
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.metrics.lookup import MetricsTable
from judgeprobe.prompts.task import Task
from judgeprobe.report.headline import gold_sentences
from judgeprobe.text.lexicons import load_lexicons
from tests.test_card import _row, _write, reading


def _metric(tidy: pl.DataFrame, metric: str, condition: str = "Blind") -> dict[str, Any]:
    found = tidy.filter(
        (pl.col("metric") == metric) & (pl.col("condition") == condition)
        & pl.col("versus").is_null()
    )  # fmt: skip
    assert found.height == 1, (metric, found)
    return found.row(0, named=True)


def _gold_row(
    i: int, verdict: str, gold: str, lengths: tuple[int, int], **extra: Any
) -> dict[str, Any]:
    return _row("Blind", i, verdict, gold=gold, length_1=lengths[0], length_2=lengths[1], **extra)


def test_acc_sens_gold_and_baselines_count_as_the_binding_definitions() -> None:
    # 10 items with gold A/B: verdict gold on 5, the other on 2, Tie on 2, Invalid on 1 (left
    # out: rates are over valid verdicts). Two gold-tie items: one Tie, one A (EDR 1/2).
    rows = []
    table = [  # (verdict, gold, len_1, len_2)
        ("A", "A", 10, 5), ("A", "A", 5, 10), ("B", "B", 10, 10), ("B", "B", 3, 9),
        ("A", "A", 8, 8), ("B", "A", 9, 2), ("A", "B", 1, 2), ("Tie", "A", 4, 4),
        ("Tie", "B", 7, 1), ("Invalid", "A", 5, 1),
    ]  # fmt: skip
    for i, (verdict, gold, one, two) in enumerate(table):
        rows.append(_gold_row(i, verdict, gold, (one, two)))
    rows.append(_gold_row(20, "Tie", "Tie", (3, 3)))
    rows.append(_gold_row(21, "A", "Tie", (3, 3)))
    rows.append(_row("Blind", 22, "A", gold="", length_1=1, length_2=2))  # no gold: left out
    tidy = compute_metrics(pl.DataFrame(rows, infer_schema_length=None), load_lexicons(), None)
    acc = _metric(tidy, "ACC")
    assert acc["value"] == pytest.approx(5 / 9)  # 9 valid, Tie counted in n and not correct
    assert acc["n"] == 10  # items with a gold pick (the Invalid one too); gold ties are not
    assert acc["lo"] < acc["value"] < acc["hi"]
    assert _metric(tidy, "SENS_gold")["value"] == pytest.approx((5 - 2) / 9)
    # Longer is gold: items 0, 3, 5, 6 (2 > 1); equal: 2, 4, 7 (½ each); wrong: 1, 8.
    assert _metric(tidy, "ACC_longer")["value"] == pytest.approx((4 + 1.5) / 9)
    # Shorter is gold: items 1, 8; equal ½ each: 2, 4, 7.
    assert _metric(tidy, "ACC_shorter")["value"] == pytest.approx((2 + 1.5) / 9)
    vs = _metric(tidy, "ACC_vs_longer")
    assert vs["value"] == pytest.approx(5 / 9 - 5.5 / 9)
    assert vs["lo"] < vs["value"] < vs["hi"]
    assert _metric(tidy, "EDR_gold_tie")["value"] == pytest.approx(1 / 2)


def test_a_table_without_gold_has_no_gold_metric() -> None:
    rows = [_row("Blind", i, "A") for i in range(6)]
    tidy = compute_metrics(pl.DataFrame(rows), load_lexicons(), None)
    assert not set(tidy["metric"]) & {"ACC", "SENS_gold", "ACC_longer", "EDR_gold_tie"}


N = 200


def _judge(kind: str, n: int = N, longer_gold: float = 0.5) -> list[dict[str, Any]]:
    """Blind and True judgments with gold, and degraded pairs the judge passes (so that only
    the accuracy row can stop it). Gold alternates A/B; the gold response is the longer in a
    ``longer_gold`` share of items (else the shorter)."""
    rows = []
    for i in range(n):
        gold = "AB"[i % 2]
        gold_longer = (i * 7919 % 100) < longer_gold * 100
        long_side = gold if gold_longer else "BA"[i % 2]
        lengths = (120, 80) if long_side == "A" else (80, 120)
        order = "12" if i % 4 < 2 else "21"
        first = "A" if order == "12" else "B"
        other = "B" if gold == "A" else "A"
        verdict = {
            "reader": gold if i % 10 else other,  # 90 % gold
            "first": first,
            "tie": "Tie",
            "longer": long_side,
            "label": first,  # no label under Blind: it falls back on position
        }[kind]
        rows.append(_gold_row(i, verdict, gold, lengths, order=order))
        # Under True the label sits on the gold response; the label copier follows it.
        said = gold if kind == "label" else verdict
        rows.append(_row("True", i, said, order=order, gold=gold, length_1=lengths[0],
                         length_2=lengths[1], target=gold))  # fmt: skip
    return rows + reading(n, intact=int(n * 0.9))


def _card(tmp_path: Path, rows: list[dict[str, Any]]) -> dict[str, CardRow]:
    card = card_for_run(_write(tmp_path, rows), resamples=200)
    return {r.row: r for r in card.records}


def _value(got: Estimate | None) -> float | None:
    return None if got is None else got.value


def _accuracy(rows: dict[str, CardRow]) -> AccuracyRow:
    row = rows["accuracy"]
    assert isinstance(row, AccuracyRow)
    return row


def test_a_reading_judge_earns_the_accuracy_row(tmp_path: Path) -> None:
    rows = _card(tmp_path, _judge("reader"))
    acc = _accuracy(rows)
    assert acc.verdict == "SENSITIVE"
    assert _value(acc.accuracy) == pytest.approx(0.9)
    assert _value(acc.accuracy_longer) == pytest.approx(0.5)
    assert _value(acc.effect) == pytest.approx(0.8)  # SENS_gold
    assert acc.beats_length
    assert rows["sensitivity"].verdict == "SENSITIVE"
    assert rows["True"].verdict == "CLEAR"


def test_a_reader_beats_the_length_even_where_gold_is_mostly_longer(tmp_path: Path) -> None:
    rows = _card(tmp_path, _judge("reader", longer_gold=0.8))
    assert _value(_accuracy(rows).accuracy_longer) == pytest.approx(0.8, abs=0.02)
    assert rows["accuracy"].verdict == "SENSITIVE"


@pytest.mark.parametrize(
    ("kind", "longer_gold"),
    [("first", 0.5), ("tie", 0.5), ("label", 0.5), ("longer", 0.8), ("longer", 1.0)],
)
def test_no_judge_earns_the_accuracy_row_or_clear_without_reading(
    tmp_path: Path, kind: str, longer_gold: float
) -> None:
    rows = _card(tmp_path, _judge(kind, longer_gold=longer_gold))
    assert rows["sensitivity"].verdict == "SENSITIVE"  # the degraded copies alone pass it
    assert rows["accuracy"].verdict == "INSENSITIVE", rows["accuracy"]
    assert all(r.verdict != "CLEAR" for r in rows.values())
    if kind == "longer":  # significant SENS_gold, but ACC is its baseline
        assert (_value(rows["accuracy"].effect) or 0) > 0.5
        acc = _accuracy(rows)
        assert _value(acc.accuracy) == pytest.approx(_value(acc.accuracy_longer))
        assert acc.beats_length is False


def test_the_headline_names_a_judge_that_does_not_beat_the_length(tmp_path: Path) -> None:
    lex = load_lexicons()
    longer = compute_metrics(pl.DataFrame(_judge("longer", longer_gold=0.8)), lex, None)
    (line,) = gold_sentences(MetricsTable(longer))
    assert line.startswith("⚠ j (baseline) does not beat picking the longer response")
    reader = compute_metrics(pl.DataFrame(_judge("reader")), lex, None)
    (line,) = gold_sentences(MetricsTable(reader))
    assert "beyond the content-blind baselines" in line
    assert "ACC 90%" in line


def test_the_card_speaks_of_the_tasks_nouns(tmp_path: Path) -> None:
    card = card_for_run(_write(tmp_path, _judge("reader")), resamples=200)
    task = Task.model_validate("qa")
    qa = replace(card, task=task)
    assert rule(qa) == task.nouns(rule(card))
    assert "summar" not in rule(qa).lower()
    notes = " ".join(display(qa)["note"].to_list())
    assert "summar" not in notes.lower()


def test_gold_alone_can_show_a_judge_reads(tmp_path: Path) -> None:
    """A run without degraded copies: the accuracy row is the reading control by itself."""
    rows = [r for r in _judge("reader") if r["condition"] != "DegradedNumber"]
    card = _card(tmp_path, rows)
    assert "sensitivity" not in card
    assert card["accuracy"].verdict == "SENSITIVE"
    assert card["True"].verdict == "CLEAR"
