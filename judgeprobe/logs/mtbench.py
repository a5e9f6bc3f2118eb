"""MT-Bench (FastChat ``llm_judge``) judgments, human judgments and model answers.

- Pair judgments (``model_judgment/*_pair.jsonl``): one line holds two judging calls, g1 with
  ``model_1`` shown first and g2 with ``model_2`` shown first; each winner names a model
  (``model_1``, ``model_2``), ``tie`` or ``error`` (the judge's reply held no verdict); any
  other winner is unreadable too, an Invalid judgment with its reason. Each call's prompt
  (``g1_user_prompt``/``g2_user_prompt``) holds the question and both answers between
  FastChat's markers (``PROMPT_TEXTS``), so the texts, hence lengths, need no ``--answers``.
- Single-answer judgments (``*_single.jsonl``): a score per answer, −1 when the judge's reply
  held no rating (unreadable), a score that is not a number unreadable too; the answer is read
  from ``user_prompt`` the same way.
- Human judgments (``human_judgments``): ``model_a``, ``model_b``, ``winner``
  (``core.layouts.mt_bench_winner``), ``judge`` the annotator.
- Answers (``--answers``, FastChat's ``model_answer/`` folder: one ``MODEL.jsonl`` a model,
  named by its file as FastChat's loader does, whatever its ``model_id``; its
  ``choices[0].turns`` the answers by turn), and ``question.jsonl`` beside that folder for the
  question texts and categories. Two files naming one model (in two ``--answers`` folders) are
  an error.

``judge`` is [model, prompt name]: the prompt name is the protocol.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.core.layouts import mt_bench_winner
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
from judgeprobe.logs.source import Record, line_count, need, records, text, turn_of
from judgeprobe.prompts.task import Task

PAIR_KEYS = {"model_1", "model_2", "g1_winner", "g2_winner"}
SINGLE_KEYS = {"model", "score", "judgment"}
HUMAN_KEYS = {"model_a", "model_b", "winner"}
_NO_VERDICT = "the judge's reply held no verdict (error)"
_WINNERS = ("model_1", "model_2", "tie", "tie (inconsistent)", "error")

_CONVERSATION = r"(?s).*\n\n### {role}:\n(.*?)\n\n{end}"
PROMPT_TEXTS: dict[str, tuple[str, ...]] = {
    "question": (
        r"(?s)\[(?:User )?Question\]\n(.*?)\n\n\[The Start of ",
        _CONVERSATION.format(role="User", end="### Assistant A:"),
    ),
    "a": (
        r"(?s)\[The Start of Assistant A's Answer\]\n(.*?)\n\[The End of Assistant A's Answer\]",
        r"(?s)\[The Start of Assistant's Answer\]\n(.*?)\n\[The End of Assistant's Answer\]",
        _CONVERSATION.format(
            role="Assistant A", end=r"<\|The End of Assistant A's Conversation with User\|>"
        ),
    ),
    "b": (
        r"(?s)\[The Start of Assistant B's Answer\]\n(.*?)\n\[The End of Assistant B's Answer\]",
        _CONVERSATION.format(
            role="Assistant B", end=r"<\|The End of Assistant B's Conversation with User\|>"
        ),
    ),
}
"""Where FastChat's judge prompts (``judge_prompts.jsonl``: pair-v2, pair-math-v1, single-v1,
single-math-v1 and their multi-turn forms) hold the question and the answers shown as A and B
(a single prompt's one answer as A): the first pattern that matches wins. In a multi-turn
prompt the last user message and the last answer are the judged turn's. Python's ``re`` and
Polars' engine read them alike (the fast path uses the same patterns)."""


def judge_of(record: Record) -> tuple[str, str]:
    """The judging model and its prompt name (the protocol) from MT-Bench's ``judge``."""
    judge = need(record, "judge")
    if isinstance(judge, list) and len(judge) >= 2 and all(isinstance(x, str) for x in judge):
        return judge[0], judge[1]
    if isinstance(judge, str) and judge:
        return judge, "log"
    raise BadRow(f"judge {judge!r} is neither [model, prompt] nor a name")


def prompt_text(prompt: object, part: str) -> str | None:
    """The question (``part`` "question") or answer ("a", "b") a FastChat judge prompt holds."""
    if not isinstance(prompt, str):
        return None
    for pattern in PROMPT_TEXTS[part]:
        found = re.search(pattern, prompt)
        if found:
            return found.group(1)
    return None


def _unknown(value: object) -> str:
    return f"winner '{value}' is not model_1, model_2, tie or error"


def _winner(value: object, first: str) -> tuple[Winner | None, str]:
    """A g-winner in screen terms (``first``: the model key shown first), or why unreadable."""
    if value in ("tie", "tie (inconsistent)"):
        return "tie", ""
    if value in ("model_1", "model_2"):
        return ("first" if value == first else "second"), ""
    return None, _NO_VERDICT if value == "error" else _unknown(value)


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
        won, why = winners[g]
        prompt = record.get(f"{g}_user_prompt")
        yield PairRow(
            where=where, judge=judge, protocol=protocol, question_id=qid, turn=turn,
            first=models[first], second=models[second], winner=won,
            raw=str(record[f"{g}_winner"]), explanation=text(record.get(f"{g}_judgment")) or "",
            invalid_reason=why, question=prompt_text(prompt, "question"),
            response_first=prompt_text(prompt, "a"), response_second=prompt_text(prompt, "b"),
        )  # fmt: skip


def single_rows(where: Where, record: Record) -> Iterator[ScoreRow]:
    """One single-answer judgment: a score, −1 (or none) unreadable."""
    judge, protocol = judge_of(record)
    raw = record.get("score")
    score: float | None = None
    why = ""
    if isinstance(raw, int | float) and not isinstance(raw, bool) and raw != -1:
        score = float(raw)
    elif raw in (-1, None):
        why = "the judge's reply held no rating (−1)"
    else:
        why = f"score {raw!r} is not a number"
    prompt = record.get("user_prompt")
    yield ScoreRow(
        where=where, judge=judge, protocol=protocol, question_id=str(need(record, "question_id")),
        turn=turn_of(record), generator=str(need(record, "model")), score=score, raw=str(raw),
        explanation=text(record.get("judgment")) or "", invalid_reason=why,
        question=prompt_text(prompt, "question"), response=prompt_text(prompt, "a"),
    )  # fmt: skip


_HUMAN: dict[str, Preferred] = {"A": "1", "B": "2", "Tie": "tie"}


def human_votes(where: Where, record: Record) -> VoteRow:
    """One MT-Bench human judgment as a vote on the pair (model_a, model_b)."""
    try:
        preferred = _HUMAN[mt_bench_winner(need(record, "winner"))]
    except ValueError as exc:
        raise BadRow(str(exc)) from None
    return VoteRow(
        where=where, question_id=str(need(record, "question_id")), turn=turn_of(record),
        generator_1=str(need(record, "model_a")), generator_2=str(need(record, "model_b")),
        preferred=preferred, annotator=str(record.get("judge") or ""),
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


def read_answers(folders: Sequence[Path], bad: list[str]) -> Answers:
    """FastChat's ``model_answer/`` folders (and each one's ``question.jsonl`` beside it).

    Each ``MODEL.jsonl`` holds model MODEL's answers, whatever its lines' ``model_id`` say (as
    FastChat's ``load_model_answers`` keys them); a model named by files in two folders is an
    error. A line that cannot be read is one entry of ``bad``.
    """
    found = Answers()
    owner: dict[str, Path] = {}
    for folder in folders:
        if not folder.is_dir():
            raise JudgeprobeError(f"--answers {folder}: not a folder (FastChat's model_answer/)")
        files = sorted(folder.glob("*.jsonl"))
        if not files:
            raise JudgeprobeError(f"--answers {folder}: no MODEL.jsonl file in it")
        for path in files:
            if path.stem in owner:
                raise JudgeprobeError(
                    f"--answers: {owner[path.stem]} and {path} both hold model {path.stem}'s "
                    "answers; give one of them"
                )
            owner[path.stem] = path
            _model_answers(path, found, bad)
        _questions(folder.parent / "question.jsonl", found, bad)
    return found


def _model_answers(path: Path, found: Answers, bad: list[str]) -> None:
    """One ``MODEL.jsonl``: each line's ``choices[0].turns`` by question and turn."""
    for where, record in records(path):
        try:
            if isinstance(record, BadRow):
                raise record
            choices = need(record, "choices")
            turns = choices[0].get("turns") if isinstance(choices, list) and choices else None
            if not isinstance(turns, list):
                raise BadRow("choices[0].turns is not a list")
            qid = str(need(record, "question_id"))
            for number, answer in enumerate(turns, start=1):
                found.answers[(path.stem, qid, number)] = str(answer)
        except (BadRow, AttributeError) as exc:
            bad.append(f"{where}: {exc}")


def _questions(path: Path, found: Answers, bad: list[str]) -> None:
    """FastChat's ``question.jsonl``: each question's turns and category, if the file is there."""
    if not path.is_file():
        return
    for where, record in records(path):
        if isinstance(record, dict) and "question_id" in record:
            qid = str(record["question_id"])
            for number, turn in enumerate(record.get("turns") or [], start=1):
                found.questions[(qid, number)] = str(turn)
            found.categories[qid] = str(record.get("category") or "")
        else:
            bad.append(f"{where}: not a question")


_FAST_SCHEMA: dict[str, pl.DataType] = {
    "question_id": pl.String(), "model_1": pl.String(), "model_2": pl.String(),
    "g1_winner": pl.String(), "g2_winner": pl.String(), "judge": pl.List(pl.String()),
    "g1_judgment": pl.String(), "g2_judgment": pl.String(), "turn": pl.Int64(),
    "g1_user_prompt": pl.String(), "g2_user_prompt": pl.String(),
}  # fmt: skip


def pair_calls_fast(path: Path) -> pl.LazyFrame | None:
    """A pair log as a lazy Polars plan of judging calls (``rows.CALLS``); None if not clean.

    Ten times faster than ``pair_rows`` line by line, and the same calls, never all in memory
    at once; any line it cannot vouch for (not JSON, a field missing or of another type, a
    blank line that would shift the line numbers) sends the file to ``pair_rows``, which names
    the line. An unknown winner is an Invalid call, as ``pair_rows`` makes it.
    """
    frame = pl.scan_ndjson(path, schema=_FAST_SCHEMA)
    required = ["question_id", "model_1", "model_2", "g1_winner", "g2_winner", "judge"]
    clean = (
        pl.all_horizontal(pl.col(required).is_not_null())
        & (pl.col("model_1") != pl.col("model_2")) & (pl.col("judge").list.len() >= 2)
        & (pl.col("turn").fill_null(1) >= 1)
    )  # fmt: skip
    try:
        checked = frame.select(clean=clean.all(), rows=pl.len()).collect(engine="streaming")
    except Exception:  # polars raises several types for a line it cannot read
        return None
    rows = int(checked["rows"][0])
    if rows == 0 or not checked["clean"][0] or line_count(path) != rows:
        return None
    base = frame.with_columns(
        file=pl.lit(str(path)), line=pl.int_range(1, pl.len() + 1, dtype=pl.Int64),
        judge_name=pl.col("judge").list.get(0), protocol=pl.col("judge").list.get(1),
        turn=pl.col("turn").fill_null(1),
    )  # fmt: skip
    calls = []
    for g, first, second in (("g1", "model_1", "model_2"), ("g2", "model_2", "model_1")):
        won = pl.col(f"{g}_winner")
        winner = (
            pl.when(won.is_in(["tie", "tie (inconsistent)"])).then(pl.lit("tie"))
            .when(won == first).then(pl.lit("first"))
            .when(won == second).then(pl.lit("second"))
        )  # fmt: skip
        prompt = pl.col(f"{g}_user_prompt")
        calls.append(calls_plan(
            base, file="file", line="line", judge="judge_name", protocol="protocol",
            question_id="question_id", turn="turn", first=first, second=second,
            winner=winner, raw=won, explanation=pl.col(f"{g}_judgment").fill_null(""),
            invalid_reason=pl.when(winner.is_not_null()).then(pl.lit(""))
            .when(won == "error").then(pl.lit(_NO_VERDICT))
            .otherwise(pl.format(_unknown("{}"), won)),
            question=_prompt_expr(prompt, "question"), response_first=_prompt_expr(prompt, "a"),
            response_second=_prompt_expr(prompt, "b"), category=pl.lit(""),
            p_second=pl.lit(None), shown=pl.lit(True), strength=pl.lit(None),
            randomized=pl.lit(None),
        ))  # fmt: skip
    return pl.concat(calls)


QA = Task(preset="qa")
"""MT-Bench's task: answers to a question."""


def _prompt_expr(prompt: pl.Expr, part: str) -> pl.Expr:
    """``prompt_text`` as a Polars expression: the first of the patterns that matches."""
    return pl.coalesce([prompt.str.extract(p, 1) for p in PROMPT_TEXTS[part]])


def _fast(path: Path, options: ReadOptions) -> pl.LazyFrame | None:
    del options
    return pair_calls_fast(path)


register_format(LogFormat(
    "mtbench-pair", lambda s: s.keys >= PAIR_KEYS, per_record(pair_rows), _fast,
    "FastChat llm_judge model_judgment/*_pair.jsonl", QA,
))  # fmt: skip
register_format(LogFormat(
    "mtbench-single", lambda s: s.keys >= SINGLE_KEYS and "judge" in s.keys,
    per_record(single_rows), help="FastChat llm_judge model_judgment/*_single.jsonl", task=QA,
))  # fmt: skip
