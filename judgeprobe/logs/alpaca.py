"""AlpacaEval annotations (``annotations.json``): one judging call per record.

``preference`` 1 or 2 names ``output_1`` or ``output_2``, 1.5 a tie; a weighted annotator
writes a float p in [1, 2], read as 1 below 1.5, 2 above and Tie at 1.5, with P(2) = p − 1
kept beside the verdict. A null preference (the annotator's reply did not parse) is
unreadable. AlpacaEval shows the outputs in a random order and writes the preference back in
``output_1``/``output_2`` terms, so the shown order is not in the log: no position row.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from judgeprobe.core.records import document_hash
from judgeprobe.logs.formats import LogFormat, per_record, register_format
from judgeprobe.logs.rows import BadRow, PairRow, Where, Winner
from judgeprobe.logs.source import Record, need, text

KEYS = {"instruction", "output_1", "output_2", "preference"}
PROTOCOL = "alpaca_eval"


def preference(value: object) -> tuple[Winner | None, float | None, str]:
    """A preference as a verdict on (output_1, output_2), P(output_2), and why not readable."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None, None, "no preference (the annotator's reply did not parse)"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRow(f"preference {value!r} is not a number")
    p = float(value)
    if not 1.0 <= p <= 2.0:
        return None, None, f"preference {value} is outside [1, 2]"
    won: Winner = "tie" if p == 1.5 else "first" if p < 1.5 else "second"
    return won, (p - 1.0 if p not in (1.0, 1.5, 2.0) else None), ""


def alpaca_rows(where: Where, record: Record) -> Iterator[PairRow]:
    """One annotation as a pair verdict (``output_1`` as the first of the pair)."""
    instruction = text(need(record, "instruction")) or ""
    won, p_second, why = preference(record.get("preference"))
    first = str(record.get("generator_1") or "output_1")
    second = str(record.get("generator_2") or "output_2")
    yield PairRow(
        where=where, judge=str(record.get("annotator") or "annotator"), protocol=PROTOCOL,
        question_id=document_hash(instruction), turn=1, first=first, second=second, winner=won,
        raw=str(record.get("preference")), explanation=text(record.get("raw_completion")) or "",
        invalid_reason=why, question=instruction, response_first=text(record.get("output_1")),
        response_second=text(record.get("output_2")), category=str(record.get("dataset") or ""),
        p_second=p_second, shown=False,
    )  # fmt: skip


register_format(LogFormat(
    "alpaca", lambda s: s.keys >= KEYS, per_record(alpaca_rows),
    help="AlpacaEval annotations.json",
))  # fmt: skip
