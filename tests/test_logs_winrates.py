"""Win rates as the log's own tool counts them, and the randomized position row's interval.

MT-Bench pair: the expected figures are counted here with FastChat's ``show_result.py``
pairwise loop (a line is one result: a tie when g1 says tie or g1 and g2 differ, lines with an
``error`` in either call left out), re-stated in the test, never through judgeprobe's code.
The AlpacaEval rule is tested on AlpacaEval's own files (tests/test_real_logs_alpaca.py).
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import orjson
import polars as pl
import pytest

from judgeprobe.logs.__main__ import cli as logs_cli
from judgeprobe.metrics.observed import randomized_position
from judgeprobe.metrics.winrates import win_rates
from judgeprobe.runs.rundir import RunDir

WINNERS = ["model_1", "model_2", "tie", "error"]


def _mtbench_lines(seed: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    models = ["alpaca-13b", "gpt-3.5-turbo", "vicuna-13b"]
    lines = []
    for qid in range(81, 111):
        m1, m2 = rng.sample(models, 2)
        lines.append({
            "question_id": qid, "model_1": m1, "model_2": m2,
            "g1_winner": rng.choices(WINNERS, [4, 4, 2, 1])[0],
            "g2_winner": rng.choices(WINNERS, [4, 4, 2, 1])[0],
            "judge": ["gpt-4", "pair-v2"], "g1_judgment": "…", "g2_judgment": "…", "turn": 1,
        })  # fmt: skip
    return lines


def _fastchat(lines: list[dict[str, object]]) -> dict[str, tuple[int, int, int]]:
    """FastChat's show_result.py, pairwise: wins, losses and ties per model."""
    res: Counter[tuple[str, str]] = Counter()
    for row in lines:
        if row["g1_winner"] == "error" or row["g2_winner"] == "error":
            continue
        m1, m2 = str(row["model_1"]), str(row["model_2"])
        if row["g1_winner"] == "tie" or row["g1_winner"] != row["g2_winner"]:
            res[(m1, "tie")] += 1
            res[(m2, "tie")] += 1
        else:
            winner, loser = (m1, m2) if row["g1_winner"] == "model_1" else (m2, m1)
            res[(winner, "win")] += 1
            res[(loser, "loss")] += 1
    models = {m for m, _ in res}
    return {m: (res[(m, "win")], res[(m, "loss")], res[(m, "tie")]) for m in models}


def test_mtbench_pair_win_rate_is_fastchats_win_rate_adjusted(tmp_path: Path) -> None:
    lines = _mtbench_lines(3)
    log = tmp_path / "gpt-4_pair.jsonl"
    log.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    out = tmp_path / "run"
    assert logs_cli([str(log), "--out", str(out), "--resamples", "0", "--no-report"]) != 2
    rates = pl.read_csv(RunDir(out).win_rates)
    expected = _fastchat(lines)
    assert set(rates["model"].to_list()) == set(expected)
    for row in rates.iter_rows(named=True):
        wins, losses, ties = expected[row["model"]]
        assert (row["wins"], row["losses"], row["ties"]) == (wins, losses, ties)
        assert row["n"] == sum(1 for x in lines if row["model"] in (x["model_1"], x["model_2"]))
        assert row["invalid"] == row["n"] - wins - losses - ties
        assert row["win_rate"] == pytest.approx((wins + 0.5 * ties) / (wins + losses + ties))


def test_any_other_log_counts_each_verdict(tmp_path: Path) -> None:
    rows = [("q1", "a", "b", "1"), ("q2", "a", "b", "2"), ("q3", "b", "a", "tie"),
            ("q4", "a", "b", "1"), ("q5", "a", "b", "nonsense")]  # fmt: skip
    log = tmp_path / "log.csv"
    log.write_text("question_id,generator_1,generator_2,verdict,judge\n"
                   + "".join(f"{q},{g1},{g2},{v},j\n" for q, g1, g2, v in rows))  # fmt: skip
    out = tmp_path / "run"
    logs_cli([str(log), "--out", str(out), "--resamples", "0", "--no-report"])
    a = pl.read_csv(RunDir(out).win_rates).filter(pl.col("model") == "a").row(0, named=True)
    assert (a["n"], a["wins"], a["ties"], a["losses"], a["invalid"]) == (5, 2, 1, 1, 1)
    assert a["win_rate"] == pytest.approx((2 + 0.5) / 4)


def test_a_soft_preference_counts_its_probability() -> None:
    frame = pl.LazyFrame({
        "judge": ["w"] * 3, "protocol": ["p"] * 3, "generator_1": ["a"] * 3,
        "generator_2": ["b"] * 3, "verdict": ["B", "A", "Invalid"],
        "details": ['{"P(B)": 0.75}', '{"P(B)": 1.5e-7}', None],
        "request_key": ["f:1", "f:2", "f:3"],
    })  # fmt: skip
    b = win_rates(frame).filter(pl.col("model") == "b").row(0, named=True)
    assert (b["wins"], b["losses"], b["invalid"]) == (1, 1, 1)
    assert b["win_rate"] == pytest.approx((0.75 + 1.5e-7) / 2)


def _randomized(rng: random.Random, questions: int, share: float) -> pl.DataFrame:
    rows = []
    for q in range(questions):
        order = rng.choice(["12", "21"])
        first_won = rng.random() < share
        verdict = "A" if (order == "12") == first_won else "B"
        rows.append({"judge": "j", "protocol": "p", "condition": "Blind", "document_id": str(q),
                     "item_id": f"{q}/t1/a~b", "order": order, "verdict": verdict})  # fmt: skip
    return pl.DataFrame(rows)


@pytest.mark.parametrize("share", [0.5, 0.62])
def test_the_randomized_interval_keeps_its_coverage(share: float) -> None:
    """The 95 % interval covers the true share − ½ in at least ~95 % of simulated logs."""
    rng = random.Random(7)
    cells = {("j", "p"): {"kept": 1, "switched": 1, "undetermined": 0}}
    covered, runs = 0, 300
    for _ in range(runs):
        (o,) = randomized_position(_randomized(rng, 120, share), cells)
        lo, hi = o.effect.lo, o.effect.hi
        assert lo is not None
        assert hi is not None
        covered += lo <= share - 0.5 <= hi
    assert covered / runs >= 0.93


def test_no_randomized_row_without_a_shuffled_cell() -> None:
    frame = _randomized(random.Random(1), 30, 0.5)
    assert randomized_position(frame, {}) == []


FASTCHAT = Path(__file__).parent / "fixtures" / "real_logs" / "fastchat" / "stefanstud"


def test_fastchats_own_pair_log_gives_its_win_rate_adjusted(tmp_path: Path) -> None:
    """A real FastChat ``gpt-4_pair.jsonl`` (SOURCES.md): show_result.py pools every prompt of
    the file, so its counts are the sums of our per-protocol rows."""
    log = FASTCHAT / "model_judgment" / "gpt-4_pair.jsonl"
    lines = [orjson.loads(x) for x in log.read_bytes().splitlines() if x.strip()]
    out = tmp_path / "run"
    assert logs_cli([str(log), "--out", str(out), "--resamples", "0", "--no-report"]) != 2
    rates = pl.read_csv(RunDir(out).win_rates)
    assert set(rates["protocol"].to_list()) == {str(x["judge"][1]) for x in lines}
    pooled = rates.group_by("model").agg(pl.col("wins", "losses", "ties").sum())
    expected = _fastchat(lines)
    for row in pooled.iter_rows(named=True):
        assert (row["wins"], row["losses"], row["ties"]) == expected[row["model"]]
