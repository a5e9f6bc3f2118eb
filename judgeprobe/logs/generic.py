"""Any JSONL, JSON or CSV judge log: columns found by ``--map`` or by the alias table.

A pairwise log needs a verdict and the two generators (or responses); a pointwise log a score
and the generator. ``--map field=column,…`` names a column for a field; a field it does not
name is looked up in ``ALIASES`` (the first alias present wins), so common logs need no map.
Verdict values: 1/2/tie, A/B/tie (C and [[C]] are a tie), model_1/model_2, model_a/model_b,
first/second, 1.5 (a tie), a float in [1, 2] (a weighted preference, as AlpacaEval's), and
error/invalid/empty (unreadable). Response 1 is taken as shown first unless the log has an
``order`` column (12, 21, or swapped true/false).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from judgeprobe import JudgeprobeError
from judgeprobe.core.records import document_hash
from judgeprobe.logs.alpaca import preference
from judgeprobe.logs.formats import LogFormat, ReadOptions, record_rows, register_format
from judgeprobe.logs.rows import BadRow, PairRow, Row, ScoreRow, Skipped, Where, Winner
from judgeprobe.logs.source import Record, records, text, turn_of

ALIASES: dict[str, tuple[str, ...]] = {
    "question_id": ("question_id", "id", "qid", "prompt_id", "sample_id", "instruction_id",
                    "example_id"),
    "question": ("question", "prompt", "instruction", "input", "query"),
    "turn": ("turn",),
    "generator_1": ("generator_1", "model_1", "model_a", "generator_a", "system_1"),
    "generator_2": ("generator_2", "model_2", "model_b", "generator_b", "system_2"),
    "response_1": ("response_1", "output_1", "answer_1", "answer_a", "response_a", "output_a",
                   "completion_a", "completion_1"),
    "response_2": ("response_2", "output_2", "answer_2", "answer_b", "response_b", "output_b",
                   "completion_b", "completion_2"),
    "verdict": ("verdict", "winner", "preference", "preferred", "choice", "label"),
    "order": ("order", "swapped"),
    "judge": ("judge", "annotator", "grader", "evaluator", "judge_model"),
    "protocol": ("protocol", "prompt_name", "template"),
    "explanation": ("explanation", "reasoning", "rationale", "judgment", "critique", "reason"),
    "score": ("score", "rating", "grade"),
    "generator": ("generator", "model", "model_id", "system"),
    "response": ("response", "output", "answer", "completion"),
}  # fmt: skip
"""Each field and the column names it is found under, first present wins (``docs/logs.md``)."""

_TIE = {"tie", "c", "[[c]]", "3", "0.5", "draw", "equal", "both", "tie (bothbad)"}
_FIRST = {"1", "a", "[[a]]", "model_1", "model_a", "first", "output_1", "response_1"}
_SECOND = {"2", "b", "[[b]]", "model_2", "model_b", "second", "output_2", "response_2"}
_UNREADABLE = {"", "error", "invalid", "none", "null", "nan", "-1"}


@dataclass(frozen=True, slots=True)
class Columns:
    """Where each field is, for one file: ``--map``'s choice, else the first alias found."""

    mapped: Mapping[str, str]

    def find(self, record: Record, field: str) -> object:
        """The record's value of ``field`` (None when absent)."""
        if field in self.mapped:
            return record.get(self.mapped[field])
        for name in ALIASES[field]:
            if name in record:
                return record[name]
        return None


def parse_map(spec: str | None) -> dict[str, str]:
    """``--map field=column,…``; one error line for an unknown field or a bad pair."""
    out: dict[str, str] = {}
    for part in (spec or "").split(","):
        if not part.strip():
            continue
        field, sep, column = part.partition("=")
        field, column = field.strip(), column.strip()
        if not sep or not column:
            raise JudgeprobeError(f"--map {part!r}: write field=column")
        if field not in ALIASES:
            raise JudgeprobeError(f"--map {field!r}: not a field ({', '.join(ALIASES)})")
        out[field] = column
    return out


def verdict(value: object) -> tuple[Winner | None, float | None, str]:
    """A verdict value in the terms of (response 1, response 2), P(2), and why not readable."""
    if isinstance(value, float) and not isinstance(value, bool) and 1.0 < value < 2.0:
        return preference(value)
    word = "" if value is None else str(value).strip().lower()
    if word in _TIE:
        return "tie", None, ""
    if word in _FIRST:
        return "first", None, ""
    if word in _SECOND:
        return "second", None, ""
    if word in _UNREADABLE:
        return None, None, f"unreadable verdict {value!r}"
    try:
        return preference(float(word))
    except ValueError:
        return None, None, f"verdict {value!r} does not parse"


def _swapped(value: object) -> bool:
    word = str(value).strip().lower()
    if word in ("12", "false", "0", "no"):
        return False
    if word in ("21", "true", "1", "yes"):
        return True
    raise BadRow(f"order {value!r} is not 12/21 or swapped true/false")


def generic_rows(where: Where, record: Record, columns: Columns) -> Iterator[Row]:
    """One record as a pair verdict (a verdict column) or a score (a score column)."""
    get = columns.find
    question = text(get(record, "question"))
    qid_value = get(record, "question_id")
    if qid_value is None and question is None:
        raise BadRow("no question id and no question text")
    qid = str(qid_value) if qid_value is not None else document_hash(question or "")
    turn = turn_of({"turn": get(record, "turn") or 1})
    judge = str(get(record, "judge") or "judge")
    protocol = str(get(record, "protocol") or "log")
    explanation = text(get(record, "explanation")) or ""
    raw = get(record, "verdict")
    if raw is None and get(record, "score") is not None:
        score_raw = get(record, "score")
        try:
            score = float(str(score_raw))
            why = ""
        except ValueError:
            score, why = None, f"score {score_raw!r} is not a number"
        if score == -1:
            score, why = None, "score −1 (no rating)"
        generator = get(record, "generator")
        if generator is None:
            raise BadRow("a score without a generator (model) column")
        yield ScoreRow(where=where, judge=judge, protocol=protocol, question_id=qid, turn=turn,
                       generator=str(generator), score=score, raw=str(score_raw),
                       explanation=explanation, invalid_reason=why, question=question,
                       response=text(get(record, "response")))  # fmt: skip
        return
    if raw is None and "verdict" not in columns.mapped:
        raise BadRow(f"no verdict column (looked for {', '.join(ALIASES['verdict'])}; use --map)")
    won, p_second, why = verdict(raw)
    r1, r2 = text(get(record, "response_1")), text(get(record, "response_2"))
    g1 = get(record, "generator_1")
    g2 = get(record, "generator_2")
    if g1 is not None and str(g1) == str(g2):  # as the MT-Bench reader: no pair, a skipped row
        raise BadRow(f"generator_1 and generator_2 are both {str(g1)!r}")
    if g1 is None or g2 is None:  # no names: the texts name the generators
        if r1 is None or r2 is None:
            raise BadRow("neither the generators nor both responses")
        g1, g2 = g1 or f"text:{document_hash(r1)}", g2 or f"text:{document_hash(r2)}"
    order = get(record, "order")
    swapped = order is not None and _swapped(order)
    first, second = (str(g2), str(g1)) if swapped else (str(g1), str(g2))
    r_first, r_second = (r2, r1) if swapped else (r1, r2)
    if swapped and won in ("first", "second"):
        won = "second" if won == "first" else "first"
    if swapped and p_second is not None:
        p_second = 1.0 - p_second
    yield PairRow(
        where=where, judge=judge, protocol=protocol, question_id=qid, turn=turn, first=first,
        second=second, winner=won, raw=str(raw), explanation=explanation, invalid_reason=why,
        question=question, response_first=r_first, response_second=r_second, p_second=p_second,
    )  # fmt: skip


def _rows(path: Path, options: ReadOptions) -> Iterator[Row | Skipped]:
    columns = Columns(options.mapping)
    found = _mapped_present(path, records(path), options.mapping)
    return record_rows(found, lambda where, record: generic_rows(where, record, columns))


def _mapped_present(
    path: Path, found: Iterator[tuple[Where, Record | BadRow]], mapping: Mapping[str, str]
) -> Iterator[tuple[Where, Record | BadRow]]:
    """The records as they are; at the end, an error if a column ``--map`` names is in none.

    Such a map is wrong: every verdict (or score) would read as missing.
    """
    missing = set(mapping.values())
    for where, record in found:
        if missing and isinstance(record, dict):
            missing.difference_update(record)
        yield where, record
    if missing:
        names = ", ".join(f"{f}={c}" for f, c in mapping.items() if c in missing)
        raise JudgeprobeError(
            f"{path}: --map {names}: no such column in the file (no record has a value there)"
        )


register_format(LogFormat(
    "generic", None, _rows, help="any JSONL/JSON/CSV judge log, columns by --map or alias",
))  # fmt: skip
