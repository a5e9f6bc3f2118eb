"""What a logs run's pages say: the log's nouns, no live design, no position claim without an order.

Issue 42, defects 4 to 6: a judgment whose shown order is not known (scores paired into
verdicts, an AlpacaEval annotation) gets no position row and no first/second-shown sentence; a
logs run speaks of answers or responses and questions, never of summaries, cues, a sensitivity
condition, EDR/ND or silent cue moves; a card says "all clear" only when a row could have said
otherwise.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import polars as pl
import pytest

from judgeprobe.__main__ import main as judgeprobe
from judgeprobe.card.rows import Card
from judgeprobe.card.speech import NOTHING_TO_GATE, clear_meaning
from judgeprobe.card.thresholds import load_thresholds
from judgeprobe.logs.__main__ import cli as logs_cli
from judgeprobe.report.headline import judge_sentences

LIVE_WORDS = [r"\bsummar(y|ies)\b", r"\bcues?\b", r"sensitivity condition", r"\bEDR\b",
              r"\bND\b", r"Silent cue moves", r"\bLDS\b", r"silent-cue", "all clear",
              r"\bdocuments?\b"]  # fmt: skip
ORDER_WORDS = [r"first-shown", r"second-shown", r"position \(observed\)"]
PAGES = ["report.md", "report.html", "card.md", "card.html"]
"""The pages a reader reads (card.json is checked for its order words and its summary)."""


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def _text(path: Path) -> str:
    """A page's words as a reader sees them: HTML without its style, scripts, tags and images."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        text = re.sub(r"<(style|script)\b.*?</\1>", " ", text, flags=re.S)
        text = re.sub(r"<[^>]+>", " ", text)
    return text


def _found(run: Path, patterns: list[str], pages: list[str] = PAGES) -> dict[str, list[str]]:
    """Each page's matches of ``patterns`` (empty when the page says none of them)."""
    out = {}
    for name in pages:
        text = _text(run / name)
        hits = [p for p in patterns if re.search(p, text)]
        if hits:
            out[name] = hits
    return out


def _scores(path: Path, questions: int = 30) -> Path:
    """A generic pointwise log: three models scored on each question (the second always best)."""
    rows = []
    for q in range(questions):
        for k, model in enumerate(("alpha", "beta", "gamma")):
            score = 9 if model == "beta" else 3 + (q + k) % 4
            rows.append({"question_id": q, "question": f"What is {q}?", "model": model,
                         "response": f"{model} says " + "x" * (5 + 7 * k), "score": score,
                         "judge": "grader"})  # fmt: skip
    return _jsonl(path, rows)


def test_a_score_log_makes_no_position_claim_and_speaks_of_responses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    assert logs_cli([str(_scores(tmp_path / "scores.jsonl")), "--out", str(run),
                     "--resamples", "20"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert f"exit code 0 ({NOTHING_TO_GATE})" in printed
    assert "all clear" not in printed
    assert "shown" not in printed.replace("not measured", "")
    assert _found(run, ORDER_WORDS, [*PAGES, "card.json"]) == {}
    assert _found(run, LIVE_WORDS) == {}
    assert "all clear" not in orjson.loads((run / "card.json").read_bytes())["summary"]
    report = _text(run / "report.md")
    assert "its position is not measured" in report
    assert re.search(r"\bresponses?\b", report)
    assert "questions" in report
    card = pl.read_csv(run / "card.csv")
    assert not any("position" in r for r in card["row"])
    assert orjson.loads((run / "card.json").read_bytes())["exit_code"] == 0
    # the report's figures are the card's, as metrics_ci.csv: no live metric
    metrics = pl.read_csv(run / "metrics_ci.csv")
    assert set(metrics["metric"]) == set(card["row"])
    assert judgeprobe(["report", str(run), "--resamples", "20"]) == 0  # again, from the files
    assert _found(run, LIVE_WORDS + ORDER_WORDS) == {}


def _pair(qid: int, w1: str, w2: str) -> dict[str, object]:
    return {"question_id": qid, "model_1": "alpha", "model_2": "beta", "g1_winner": w1,
            "g2_winner": w2, "judge": ["gpt-4", "pair-v2"], "g1_judgment": "[[A]]",
            "g2_judgment": "[[B]]", "turn": 1}  # fmt: skip


def test_an_mtbench_pair_log_speaks_of_answers_and_its_shown_order(tmp_path: Path) -> None:
    # each line: g1 shows alpha first, g2 beta first; "model_1" picks the first-shown in g1,
    # "model_2" picks alpha in g2 (shown second): a judge that mostly picks the first-shown
    rows = [_pair(q, "model_1", "model_2" if q % 5 else "model_1") for q in range(40)]
    run = tmp_path / "run"
    assert logs_cli([str(_jsonl(tmp_path / "gpt-4_pair.jsonl", rows)), "--out", str(run),
                     "--resamples", "20"]) in (5, 6)  # fmt: skip
    assert _found(run, LIVE_WORDS) == {}
    report = _text(run / "report.md")
    assert "position (observed)" in report
    assert re.search(r"picked the first-shown answer \d+ times", report)
    assert "40 questions" in report


def test_an_alpaca_log_without_its_order_gets_no_position_claim(tmp_path: Path) -> None:
    rows = [{"instruction": f"Write {i}.", "output_1": "a" * (10 + i), "output_2": "b" * 20,
             "generator_1": "gpt4", "generator_2": "mine", "annotator": "judge",
             "preference": 1 + (i % 3 == 0)} for i in range(30)]  # fmt: skip
    path = tmp_path / "annotations.json"
    path.write_bytes(orjson.dumps(rows))
    run = tmp_path / "run"
    logs_cli([str(path), "--out", str(run), "--resamples", "20"])
    assert _found(run, ORDER_WORDS, [*PAGES, "card.json"]) == {}
    assert _found(run, LIVE_WORDS) == {}
    report = _text(run / "report.md")
    assert "does not keep which response was shown first" in report
    assert "30 instructions" in report


def test_the_live_headline_counts_shown_order_only_where_it_reached_the_judge() -> None:
    n = 10
    base = {"judge": ["j"] * n, "protocol": ["p"] * n, "condition": ["Blind"] * n,
            "verdict": ["B"] * n}  # fmt: skip
    scored = pl.DataFrame({**base, "order": ["12", "21"] * 5, "score_1": [1.0] * n})
    orderless = pl.DataFrame({**base, "order": [""] * n, "score_1": [None] * n})
    for j in (scored, orderless):
        said = " ".join(judge_sentences(j))
        assert "-shown" not in said, said
        assert "not counted" in said, said
    ordered = pl.DataFrame({**base, "order": ["12"] * n, "score_1": [None] * n})
    assert "picked the second-shown summary in 10 of 10" in judge_sentences(ordered)[0]


def test_all_clear_only_with_a_row_that_could_have_said_otherwise() -> None:
    empty = Card((), pl.DataFrame(), load_thresholds())
    assert clear_meaning(empty) == NOTHING_TO_GATE
