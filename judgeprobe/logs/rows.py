"""The typed rows a log reader yields, and the one error a bad row raises.

A reader knows its format and nothing of the judgments table: it yields a ``PairRow`` per
judging call on a pair (in screen terms: which generator was shown first, which won), a
``ScoreRow`` per score given to one response, or a ``VoteRow`` per human vote. ``table``
turns them into candidate terms, items and judgments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import polars as pl

Winner = Literal["first", "second", "tie"]
"""A pair verdict in screen terms: the response shown first, second, or neither."""
Preferred = Literal["1", "2", "tie"]
"""A human vote in the terms of the pair as the labels file lists it."""


class BadRow(ValueError):
    """A row a reader cannot use; its message says why (the caller adds file and line)."""


@dataclass(frozen=True, slots=True)
class Where:
    """Where a row was read: the file and its line (or record number, from 1)."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class PairRow:
    """One judging call on a pair, as the log holds it (``winner`` None: unreadable).

    ``p_second`` is a weighted annotator's probability that the second-shown response is
    better (AlpacaEval's preference − 1), None for a plain verdict.
    """

    where: Where
    judge: str
    protocol: str
    question_id: str
    turn: int
    first: str  # the generator shown first
    second: str
    winner: Winner | None
    raw: str  # the verdict as the log wrote it
    explanation: str = ""
    invalid_reason: str = ""
    question: str | None = None
    response_first: str | None = None
    response_second: str | None = None
    category: str = ""
    p_second: float | None = None
    shown: bool = True  # False: the log does not say which response was shown first
    # Where the log's tool shuffled the shown order itself (AlpacaEval): whether the row's
    # order was recovered as the log listed the pair (kept), reversed (switched), or not
    # (unknown); None for a log whose order was not randomized by its tool.
    randomized: Literal["kept", "switched", "unknown"] | None = None


@dataclass(frozen=True, slots=True)
class ScoreRow:
    """One score given to one response (``score`` None: unreadable, e.g. MT-Bench's −1)."""

    where: Where
    judge: str
    protocol: str
    question_id: str
    turn: int
    generator: str
    score: float | None
    raw: str
    explanation: str = ""
    invalid_reason: str = ""
    question: str | None = None
    response: str | None = None
    category: str = ""


@dataclass(frozen=True, slots=True)
class VoteRow:
    """One human vote on a pair (``generator_1``/``generator_2`` as the labels file lists them)."""

    where: Where
    question_id: str
    turn: int
    generator_1: str
    generator_2: str
    preferred: Preferred | None  # None: a score, not a preference
    annotator: str
    score: float | None = None
    weight: float | None = None


Row = PairRow | ScoreRow
"""What a judge-log reader yields."""


CALLS: dict[str, pl.DataType] = {
    "file": pl.String(),
    "line": pl.Int64(),
    "judge": pl.String(),
    "protocol": pl.String(),
    "question_id": pl.String(),
    "turn": pl.Int64(),
    "first": pl.String(),
    "second": pl.String(),
    "winner": pl.String(),
    "raw": pl.String(),
    "explanation": pl.String(),
    "invalid_reason": pl.String(),
    "question": pl.String(),
    "response_first": pl.String(),
    "response_second": pl.String(),
    "category": pl.String(),
    "p_second": pl.Float64(),
    "shown": pl.Boolean(),
}
"""``PairRow``'s fields as a table's columns (``where`` as file and line): the judging calls
``table`` turns into judgments with Polars expressions, whichever reader made them."""


def calls_frame(rows: list[PairRow]) -> pl.LazyFrame:
    """Pair rows as one table of judging calls (``CALLS``)."""
    data: dict[str, list[object]] = {name: [] for name in CALLS}
    for r in rows:
        data["file"].append(r.where.file)
        data["line"].append(r.where.line)
        for name in list(CALLS)[2:]:
            data[name].append(getattr(r, name))
    return pl.LazyFrame(data, schema=CALLS)
