"""One human vote from a labels file: MT-Bench's human judgments, or a table of the item key."""

from __future__ import annotations

import polars as pl

from judgeprobe.logs import mtbench
from judgeprobe.logs.generic import Columns, verdict
from judgeprobe.logs.rows import BadRow, Preferred, VoteRow, Where
from judgeprobe.logs.source import Record, turn_of

_PREFERRED: dict[str, Preferred] = {"first": "1", "second": "2", "tie": "tie"}
UNMATCHED_SHOWN = 3
"""Item ids of unmatched labels named in the printed line."""


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


def unmatched_labels(labels: pl.DataFrame, judged: pl.LazyFrame) -> tuple[int, list[str]]:
    """Labels (``records.LABEL_SCHEMA``) whose item no judgment of the log holds.

    How many, and the first few of their item ids: a label matches by ``item_id`` only,
    whatever the format it came in.
    """
    held = judged.select("item_id").unique().collect()
    lost = labels.join(held, on="item_id", how="anti")
    return lost.height, lost["item_id"].head(UNMATCHED_SHOWN).to_list()
