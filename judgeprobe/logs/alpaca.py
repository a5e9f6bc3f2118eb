"""AlpacaEval annotations (``annotations.json``): one judging call per record, any annotator.

``preference`` 1 or 2 names ``output_1`` or ``output_2``; 1.5, and 0 (AlpacaEval's older
code for identical outputs), is a draw, as is a null preference on identical outputs (the
annotator was never asked). A weighted annotator writes a float p in [1, 2], read as 1 below
1.5, 2 above and Tie at 1.5, with P(output_2) = p − 1 kept beside the verdict. A null
preference on different outputs, or one that is not a number, is an Invalid judgment with its
reason. ``raw_completion`` is kept whole, a text or a structured object alike.

AlpacaEval shows the two outputs in a random order and writes the preference back in
``output_1``/``output_2`` terms; its template lists the identifier ``m`` (the first-shown
output) before ``M``. Two annotators keep enough of their reply to recover the shown order
(docs/metrics.md, "Randomized shown order, recovered (AlpacaEval)"): the weighted one its top
log-probabilities over ``m``/``M``, the ``_fn`` one ``ordered_models`` with ranks. A row whose
order is recovered is a pair row in screen terms; one whose order cannot be told has no shown
order (no position claim).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Literal

import orjson

from judgeprobe.core.records import document_hash
from judgeprobe.logs.formats import LogFormat, per_record, register_format
from judgeprobe.logs.rows import PairRow, Where, Winner
from judgeprobe.logs.source import Record, need, text
from judgeprobe.prompts.task import Task

KEYS = {"instruction", "output_1", "output_2", "preference"}
PROTOCOL = "alpaca_eval"
FIRST_ID, SECOND_ID = "m", "M"
"""The identifiers AlpacaEval's templates give the first- and second-shown output."""
Order = Literal["kept", "switched"]
"""``switched``: ``output_2`` was shown first (``rows.Randomized`` less ``undetermined``)."""


def preference(
    value: object, *, same: bool = False, zero_draw: bool = False
) -> tuple[Winner | None, float | None, str]:
    """A preference as a verdict on (output_1, output_2), P(output_2), and why not readable.

    ``same``: the two outputs are identical (a null preference is then AlpacaEval's draw);
    ``zero_draw``: 0 is a draw (AlpacaEval's own files; a generic log's 0 stays unreadable).
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        if same:
            return "tie", None, ""
        return None, None, "no preference (the annotator's reply did not parse)"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, None, f"preference {value!r} is not a number"
    p = float(value)
    if p == 0.0 and zero_draw:
        return "tie", None, ""
    if not 1.0 <= p <= 2.0:
        return None, None, f"preference {value} is outside [1, 2]"
    won: Winner = "tie" if p == 1.5 else "first" if p < 1.5 else "second"
    return won, (p - 1.0 if p not in (1.0, 1.5, 2.0) else None), ""


def _top_logprobs(completion: dict[str, object]) -> dict[str, float]:
    """The first reply token's top log-probabilities by token (chat API's ``logprobs``)."""
    logprobs = completion.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        return {}
    top = content[0].get("top_logprobs")
    found: dict[str, float] = {}
    for entry in top if isinstance(top, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("logprob"), int | float):
            found.setdefault(str(entry.get("token")), float(entry["logprob"]))
    return found


def _weighted_order(completion: dict[str, object], p_second: float) -> Order | None:
    """Switched when P(output_2) sits nearer 1 − q than q, q = P(M) as shown; else None."""
    top = _top_logprobs(completion)
    if FIRST_ID not in top and SECOND_ID not in top:
        return None
    p_m, p_big = (math.exp(top[t]) if t in top else 0.0 for t in (FIRST_ID, SECOND_ID))
    q = p_big / (p_m + p_big)
    kept, switched = abs(p_second - q), abs(p_second - (1.0 - q))
    return None if kept == switched else "switched" if switched < kept else "kept"


def _ranked_order(completion: dict[str, object], *, output_1_won: bool) -> Order | None:
    """``_fn``: switched when (``m`` ranked first) differs from (``output_1`` preferred)."""
    ranked = completion.get("ordered_models")
    if not isinstance(ranked, list):
        return None
    best = [r.get("model") for r in ranked if isinstance(r, dict) and r.get("rank") == 1]
    if len(best) != 1 or best[0] not in (FIRST_ID, SECOND_ID):
        return None
    return "kept" if (best[0] == FIRST_ID) == output_1_won else "switched"


def shown_order(completion: object, value: object) -> Order | None:
    """Which output was shown first, from the reply the annotator kept; None: cannot tell."""
    if not isinstance(completion, dict) or isinstance(value, bool):
        return None
    if not isinstance(value, int | float) or not 1.0 <= float(value) <= 2.0:
        return None
    p = float(value)
    if "logprobs" in completion:
        return _weighted_order(completion, p - 1.0)
    if "ordered_models" in completion and p != 1.5:
        return _ranked_order(completion, output_1_won=p < 1.5)
    return None


def _completion_text(value: object) -> str:
    """The annotator's reply as kept: a text as it is, a structured reply as compact JSON."""
    if value is None or isinstance(value, str):
        return value or ""
    return orjson.dumps(value).decode()


_SWAP: dict[Winner, Winner] = {"first": "second", "second": "first", "tie": "tie"}


def alpaca_rows(where: Where, record: Record) -> Iterator[PairRow]:
    """One annotation as a pair verdict, in screen terms where the shown order is recovered."""
    instruction = text(need(record, "instruction")) or ""
    out_1, out_2 = text(record.get("output_1")), text(record.get("output_2"))
    value = record.get("preference")
    same = out_1 is not None and out_1 == out_2
    won, p_second, why = preference(value, same=same, zero_draw=True)
    g1 = str(record.get("generator_1") or "output_1")
    g2 = str(record.get("generator_2") or "output_2")
    completion = record.get("raw_completion")
    order = shown_order(completion, value) if won is not None else None
    if order == "switched":  # output_2 was shown first
        g1, g2, out_1, out_2 = g2, g1, out_2, out_1
        won = _SWAP[won] if won is not None else None
        p_second = None if p_second is None else 1.0 - p_second
    yield PairRow(
        where=where, judge=str(record.get("annotator") or "annotator"), protocol=PROTOCOL,
        question_id=document_hash(instruction), turn=1, first=g1, second=g2, winner=won,
        raw=str(value), explanation=_completion_text(completion), invalid_reason=why,
        question=instruction, response_first=out_1, response_second=out_2,
        category=str(record.get("dataset") or ""), p_second=p_second, shown=order is not None,
        randomized=order or "undetermined",
    )  # fmt: skip


register_format(LogFormat(
    "alpaca", lambda s: s.keys >= KEYS, per_record(alpaca_rows),
    help="AlpacaEval annotations.json (any annotator)", task=Task(preset="instruction"),
))  # fmt: skip
