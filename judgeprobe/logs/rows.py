"""The typed rows a log reader yields, and the one error a bad row raises.

A reader knows its format and nothing of the judgments table: it yields a ``PairRow`` per
judging call on a pair (in screen terms: which generator was shown first, which won), a
``ScoreRow`` per score given to one response, or a ``VoteRow`` per human vote. ``table``
turns them into candidate terms, items and judgments.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal, get_args, get_origin, get_type_hints

import polars as pl

Winner = Literal["first", "second", "tie"]
"""A pair verdict in screen terms: the response shown first, second, or neither."""
Strength = Literal["strong", "slight"]
"""How much better the winner is, where the judge says (Arena-Hard's ``A>>B`` vs ``A>B``)."""
Preferred = Literal["1", "2", "tie"]
"""A human vote in the terms of the pair as the labels file lists it."""
Randomized = Literal["kept", "switched", "undetermined"]
"""Where the log's tool shuffled the shown order itself (AlpacaEval): the row's order as
recovered, the pair shown as the log lists it (kept) or reversed (switched), or not told."""


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
    strength: Strength | None = None  # a decisive verdict's strength, where the log grades it
    randomized: Randomized | None = None  # None: the log's tool did not shuffle the order


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


@dataclass(frozen=True, slots=True)
class Skipped:
    """A row a reader could not use: where, and why (one line of ``bad_rows.txt``)."""

    where: Where
    why: str

    def __str__(self) -> str:
        return f"{self.where}: {self.why}"


_POLARS: dict[object, pl.DataType] = {
    str: pl.String(), int: pl.Int64(), float: pl.Float64(), bool: pl.Boolean(),
    Winner: pl.String(), Preferred: pl.String(), Strength: pl.String(), Randomized: pl.String(),
}  # fmt: skip


def _polars_type(hint: object) -> pl.DataType:
    """The column type of a row field's type (``X | None`` as X's, nullable)."""
    args = [a for a in get_args(hint) if a is not type(None)] if get_origin(hint) else []
    found = _POLARS.get(args[0] if len(args) == 1 else hint)
    if found is None:
        raise TypeError(f"no column type for a row field of type {hint}")
    return found


def row_schema(row: type) -> dict[str, pl.DataType]:
    """A row type's fields as a table's columns, in field order (``where`` as file and line)."""
    hints = get_type_hints(row)
    out: dict[str, pl.DataType] = {}
    for f in fields(row):
        if hints[f.name] is Where:
            out |= {"file": pl.String(), "line": pl.Int64()}
        else:
            out[f.name] = _polars_type(hints[f.name])
    return out


CALLS: dict[str, pl.DataType] = row_schema(PairRow)
"""``PairRow``'s fields as a table's columns (``where`` as file and line): the judging calls
``table`` turns into judgments with Polars expressions, whichever reader made them."""


def calls_plan(frame: pl.LazyFrame, **columns: pl.Expr | str) -> pl.LazyFrame:
    """A table of judging calls (``CALLS``) built by expressions over ``frame``, one per field.

    A fast reader states every ``PairRow`` field (``file`` and ``line`` for ``where``) and no
    other, so its calls are the rows the line-by-line reader would make, typed the same.
    """
    if set(columns) != set(CALLS):
        missing, extra = set(CALLS) - set(columns), set(columns) - set(CALLS)
        raise TypeError(f"calls_plan: missing {sorted(missing)}, not PairRow's {sorted(extra)}")
    return frame.select(
        (pl.col(e) if isinstance(e, str) else e).cast(CALLS[n]).alias(n)
        for n, e in ((n, columns[n]) for n in CALLS)
    )


def calls_frame(rows: list[PairRow]) -> pl.LazyFrame:
    """Pair rows as one table of judging calls (``CALLS``)."""
    data: dict[str, list[object]] = {name: [] for name in CALLS}
    for r in rows:
        data["file"].append(r.where.file)
        data["line"].append(r.where.line)
        for name in list(CALLS)[2:]:
            data[name].append(getattr(r, name))
    return pl.LazyFrame(data, schema=CALLS)
