"""One vote from a labels file, and the count of labels that match no item of the log.

A labels file is a log in any pair format ``logs`` reads (``log_votes``: an AlpacaEval
annotations file of another annotator or of people, whose question is the instruction; another
judge's MT-Bench pair log), MT-Bench's human judgments, or a table of the item key (``vote``).
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from judgeprobe.logs import mtbench
from judgeprobe.logs.generic import Columns, verdict
from judgeprobe.logs.rows import BadRow, PairRow, Preferred, Row, Skipped, VoteRow, Where
from judgeprobe.logs.source import Record, turn_of

_PREFERRED: dict[str, Preferred] = {"first": "1", "second": "2", "tie": "tie"}


def pair_vote(row: PairRow) -> VoteRow:
    """A log's verdict on a pair as a vote on the same item (its question, pair and turn)."""
    if row.winner is None:
        raise BadRow(row.invalid_reason or f"verdict {row.raw!r} does not parse")
    return VoteRow(
        where=row.where, question_id=row.question_id, turn=row.turn, generator_1=row.first,
        generator_2=row.second, preferred=_PREFERRED[row.winner], annotator=row.judge,
    )  # fmt: skip


def log_votes(rows: Iterable[Row | Skipped]) -> tuple[list[VoteRow], list[str]]:
    """A log read by its own format's reader, as votes: each pair verdict one vote on its item.

    A row the reader skipped, a score (a vote needs a pair) or an unreadable verdict is one
    bad line.
    """
    votes: list[VoteRow] = []
    bad: list[str] = []
    for row in rows:
        if isinstance(row, Skipped):
            bad.append(str(row))
        elif not isinstance(row, PairRow):
            bad.append(f"{row.where}: a score, not a verdict on a pair")
        else:
            try:
                votes.append(pair_vote(row))
            except BadRow as exc:
                bad.append(f"{row.where}: {exc}")
    return votes, bad


def unmatched(labels: pl.DataFrame, judgments: pl.LazyFrame) -> int:
    """How many labels (``LABEL_SCHEMA`` rows) name an item no judgment of the log is on."""
    items = judgments.select(pl.col("item_id").unique()).collect().to_series()
    return labels.filter(~pl.col("item_id").is_in(items.implode())).height


def unmatched_line(n: int, total: int, source: str) -> str:
    """The printed sentence for labels that match no item."""
    return (f"{n} of {total} labels in {source} match no item of the log (question, pair of "
            "generators and turn): left out of every figure")  # fmt: skip


def _number(value: object, name: str) -> float | None:
    if value is None:
        return None
    try:
        return float(str(value))
    except ValueError:
        raise BadRow(f"{name} {value!r} is not a number") from None


def vote(where: Where, record: Record, columns: Columns) -> VoteRow:
    """A labels-file record as a vote on its pair (MT-Bench human judgment or a key table)."""
    if set(record) >= mtbench.HUMAN_KEYS:
        return mtbench.human_votes(where, record)
    get = columns.find
    qid, g1, g2 = get(record, "question_id"), get(record, "generator_1"), get(record, "generator_2")
    if qid is None or g1 is None or g2 is None:
        raise BadRow("a label needs the question id and both generators (generator_1, generator_2)")
    weight = _number(record.get("weight"), "weight")
    if weight is not None and weight <= 0:
        raise BadRow(f"weight {weight} is not positive")
    score = _number(record.get("score"), "score")
    preferred: Preferred | None = None
    if score is None:
        raw = record.get("preferred", get(record, "verdict"))
        won, _, why = verdict(raw)
        if won is None:
            raise BadRow(why)
        preferred = _PREFERRED[won]
    return VoteRow(
        where=where, question_id=str(qid), turn=turn_of({"turn": get(record, "turn") or 1}),
        generator_1=str(g1), generator_2=str(g2), preferred=preferred,
        annotator=str(record.get("annotator") or get(record, "judge") or ""), score=score,
        weight=weight,
    )  # fmt: skip
