"""MT-Bench (FastChat ``llm_judge``) judgments, human judgments and model answers.

- Pair judgments (``model_judgment/*_pair.jsonl``): one line holds two judging calls, g1 with
  ``model_1`` shown first and g2 with ``model_2`` shown first; each winner names a model
  (``model_1``, ``model_2``), ``tie`` or ``error`` (unreadable).
- Single-answer judgments (``*_single.jsonl``): a score per answer, −1 when the judge's reply
  held no rating (unreadable).
- Human judgments (``human_judgments``): ``model_a``, ``model_b``, ``winner``
  (``model_a``, ``model_b``, ``tie``, ``tie (bothbad)``), ``judge`` the annotator.
- Answers (``--answers``, FastChat's ``model_answer/`` folder: one ``MODEL.jsonl`` a model, its
  ``choices[0].turns`` the answers by turn), and ``question.jsonl`` beside that folder for the
  question texts and categories.

``judge`` is [model, prompt name]: the prompt name is the protocol.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.logs.formats import LogFormat, ReadOptions, per_record, register_format
from judgeprobe.logs.rows import (
    BadRow,
    PairRow,
    Preferred,
    ScoreRow,
    VoteRow,
    Where,
    Winner,
    calls_plan,
)
from judgeprobe.logs.source import Record, need, records, text, turn_of

PAIR_KEYS = {"model_1", "model_2", "g1_winner", "g2_winner"}
SINGLE_KEYS = {"model", "score", "judgment"}
HUMAN_KEYS = {"model_a", "model_b", "winner"}
_NO_VERDICT = "the judge's reply held no verdict (error)"


def judge_of(record: Record) -> tuple[str, str]:
    """The judging model and its prompt name (the protocol) from MT-Bench's ``judge``."""
    judge = need(record, "judge")
    if isinstance(judge, list) and len(judge) >= 2 and all(isinstance(x, str) for x in judge):
        return judge[0], judge[1]
    if isinstance(judge, str) and judge:
        return judge, "log"
    raise BadRow(f"judge {judge!r} is neither [model, prompt] nor a name")


def _winner(value: object, first: str) -> Winner | None:
    """A g-winner in screen terms: ``first`` is the model key shown first in that call."""
    if value in ("tie", "tie (inconsistent)"):
        return "tie"
    if value in ("model_1", "model_2"):
        return "first" if value == first else "second"
    if value == "error":
        return None
    raise BadRow(f"winner {value!r} is not model_1, model_2, tie or error")


def pair_rows(where: Where, record: Record) -> Iterator[PairRow]:
    """The two judging calls of one pair line (g1: model_1 first; g2: model_2 first)."""
    judge, protocol = judge_of(record)
    qid, turn = str(need(record, "question_id")), turn_of(record)
    models = {"model_1": str(need(record, "model_1")), "model_2": str(need(record, "model_2"))}
    if models["model_1"] == models["model_2"]:
        raise BadRow(f"model_1 and model_2 are both {models['model_1']!r}")
    calls = (("g1", "model_1", "model_2"), ("g2", "model_2", "model_1"))
    winners = {g: _winner(need(record, f"{g}_winner"), first) for g, first, _ in calls}
    for g, first, second in calls:
        won = winners[g]
        yield PairRow(
            where=where, judge=judge, protocol=protocol, question_id=qid, turn=turn,
            first=models[first], second=models[second], winner=won,
            raw=str(record[f"{g}_winner"]), explanation=text(record.get(f"{g}_judgment")) or "",
            invalid_reason="" if won is not None else _NO_VERDICT,
        )  # fmt: skip


def single_rows(where: Where, record: Record) -> Iterator[ScoreRow]:
    """One single-answer judgment: a score, −1 (or none) unreadable."""
    judge, protocol = judge_of(record)
    raw = record.get("score")
    score: float | None
    if isinstance(raw, int | float) and not isinstance(raw, bool) and raw != -1:
        score = float(raw)
    elif raw in (-1, None):
        score = None
    else:
        raise BadRow(f"score {raw!r} is not a number")
    yield ScoreRow(
        where=where, judge=judge, protocol=protocol, question_id=str(need(record, "question_id")),
        turn=turn_of(record), generator=str(need(record, "model")), score=score, raw=str(raw),
        explanation=text(record.get("judgment")) or "",
        invalid_reason="" if score is not None else "the judge's reply held no rating (−1)",
    )  # fmt: skip


_HUMAN: dict[str, Preferred] = {"model_a": "1", "model_b": "2", "tie": "tie",
                                "tie (bothbad)": "tie"}  # fmt: skip


def human_votes(where: Where, record: Record) -> VoteRow:
    """One MT-Bench human judgment as a vote on the pair (model_a, model_b)."""
    winner = need(record, "winner")
    if winner not in _HUMAN:
        raise BadRow(f"winner {winner!r} is not model_a, model_b, tie or tie (bothbad)")
    return VoteRow(
        where=where, question_id=str(need(record, "question_id")), turn=turn_of(record),
        generator_1=str(need(record, "model_a")), generator_2=str(need(record, "model_b")),
        preferred=_HUMAN[winner], annotator=str(record.get("judge") or ""),
    )  # fmt: skip


@dataclass
class Answers:
    """Answers by (model, question id, turn), and question texts and categories by id."""

    answers: dict[tuple[str, str, int], str] = field(default_factory=dict)
    questions: dict[tuple[str, int], str] = field(default_factory=dict)
    categories: dict[str, str] = field(default_factory=dict)

    def answer(self, model: str, question_id: str, turn: int) -> str | None:
        """The model's answer at that turn, None when the folder has none."""
        return self.answers.get((model, question_id, turn))

    def question(self, question_id: str, turn: int) -> str | None:
        """The user's message at that turn."""
        return self.questions.get((question_id, turn))

    def answer_frame(self) -> pl.DataFrame:
        """The answers as a table: model, question_id, turn, text."""
        keys = list(self.answers)
        return pl.DataFrame(
            {"model": [k[0] for k in keys], "question_id": [k[1] for k in keys],
             "turn": [k[2] for k in keys], "text": list(self.answers.values())},
            schema={"model": pl.String, "question_id": pl.String, "turn": pl.Int64,
                    "text": pl.String},
        )  # fmt: skip

    def question_frame(self) -> pl.DataFrame:
        """The questions as a table: question_id, turn, question, category."""
        keys = list(self.questions)
        return pl.DataFrame(
            {"question_id": [k[0] for k in keys], "turn": [k[1] for k in keys],
             "asked": list(self.questions.values()),
             "listed": [self.categories.get(k[0], "") for k in keys]},
            schema={"question_id": pl.String, "turn": pl.Int64, "asked": pl.String,
                    "listed": pl.String},
        )  # fmt: skip


def read_answers(folder: Path, bad: list[str]) -> Answers:  # noqa: C901 (two files, each line checked)
    """FastChat's ``model_answer/`` folder (and ``question.jsonl`` beside it, if there).

    A line that cannot be read is one entry of ``bad``.
    """
    if not folder.is_dir():
        raise JudgeprobeError(f"--answers {folder}: not a folder (FastChat's model_answer/)")
    found = Answers()
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise JudgeprobeError(f"--answers {folder}: no MODEL.jsonl file in it")
    for path in files:
        for where, record in records(path):
            try:
                if isinstance(record, BadRow):
                    raise record
                model = str(record.get("model_id") or path.stem)
                choices = need(record, "choices")
                turns = choices[0]["turns"] if isinstance(choices, list) and choices else None
                if not isinstance(turns, list):
                    raise BadRow("choices[0].turns is not a list")
                qid = str(need(record, "question_id"))
                for number, answer in enumerate(turns, start=1):
                    found.answers[(model, qid, number)] = str(answer)
            except (BadRow, KeyError, TypeError) as exc:
                bad.append(f"{where}: {exc}")
    questions = folder.parent / "question.jsonl"
    if questions.is_file():
        for where, record in records(questions):
            if isinstance(record, dict) and "question_id" in record:
                qid = str(record["question_id"])
                for number, turn in enumerate(record.get("turns") or [], start=1):
                    found.questions[(qid, number)] = str(turn)
                found.categories[qid] = str(record.get("category") or "")
            else:
                bad.append(f"{where}: not a question")
    return found


_FAST_SCHEMA: dict[str, pl.DataType] = {
    "question_id": pl.String(), "model_1": pl.String(), "model_2": pl.String(),
    "g1_winner": pl.String(), "g2_winner": pl.String(), "judge": pl.List(pl.String()),
    "g1_judgment": pl.String(), "g2_judgment": pl.String(), "turn": pl.Int64(),
}  # fmt: skip
_WINNERS = ["model_1", "model_2", "tie", "tie (inconsistent)", "error"]


def _line_count(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)


def pair_calls_fast(path: Path) -> pl.LazyFrame | None:
    """A pair log as a lazy Polars plan of judging calls (``rows.CALLS``); None if not clean.

    Ten times faster than ``pair_rows`` line by line, and the same calls, never all in memory
    at once; any line it cannot vouch for (not JSON, a field missing or of another type, an
    unknown winner, a blank line that would shift the line numbers) sends the file to
    ``pair_rows``, which names the line.
    """
    frame = pl.scan_ndjson(path, schema=_FAST_SCHEMA)
    required = ["question_id", "model_1", "model_2", "g1_winner", "g2_winner", "judge"]
    clean = (
        pl.all_horizontal(pl.col(required).is_not_null())
        & pl.col("g1_winner").is_in(_WINNERS) & pl.col("g2_winner").is_in(_WINNERS)
        & (pl.col("model_1") != pl.col("model_2")) & (pl.col("judge").list.len() >= 2)
        & (pl.col("turn").fill_null(1) >= 1)
    )  # fmt: skip
    try:
        checked = frame.select(clean=clean.all(), rows=pl.len()).collect(engine="streaming")
    except Exception:  # polars raises several types for a line it cannot read
        return None
    rows = int(checked["rows"][0])
    if rows == 0 or not checked["clean"][0] or _line_count(path) != rows:
        return None
    base = frame.with_columns(
        file=pl.lit(str(path)), line=pl.int_range(1, pl.len() + 1, dtype=pl.Int64),
        judge_name=pl.col("judge").list.get(0), protocol=pl.col("judge").list.get(1),
        turn=pl.col("turn").fill_null(1),
    )  # fmt: skip
    calls = []
    for g, first, second in (("g1", "model_1", "model_2"), ("g2", "model_2", "model_1")):
        won = pl.col(f"{g}_winner")
        calls.append(calls_plan(
            base, file="file", line="line", judge="judge_name", protocol="protocol",
            question_id="question_id", turn="turn", first=first, second=second,
            winner=pl.when(won.str.starts_with("tie")).then(pl.lit("tie"))
            .when(won == first).then(pl.lit("first"))
            .when(won == second).then(pl.lit("second")),
            raw=won,
            explanation=pl.col(f"{g}_judgment").fill_null(""),
            invalid_reason=pl.when(won == "error")
            .then(pl.lit(_NO_VERDICT)).otherwise(pl.lit("")),
            question=pl.lit(None), response_first=pl.lit(None), response_second=pl.lit(None),
            category=pl.lit(""), p_second=pl.lit(None), shown=pl.lit(True),
        ))  # fmt: skip
    return pl.concat(calls)


def _fast(path: Path, options: ReadOptions) -> pl.LazyFrame | None:
    del options
    return pair_calls_fast(path)


register_format(LogFormat(
    "mtbench-pair", lambda s: s.keys >= PAIR_KEYS, per_record(pair_rows), _fast,
    "FastChat llm_judge model_judgment/*_pair.jsonl",
))  # fmt: skip
register_format(LogFormat(
    "mtbench-single", lambda s: s.keys >= SINGLE_KEYS and "judge" in s.keys,
    per_record(single_rows), help="FastChat llm_judge model_judgment/*_single.jsonl",
))  # fmt: skip
