"""promptfoo ``results.json`` (``promptfoo eval -o results.json``): model-graded scores.

Each result is one provider's output for one test case; its ``gradingResult`` holds the
graders' verdict: ``score`` (0 to 1), ``pass`` and ``reason``, and per assertion in
``componentResults``. The score read is the model-graded assertion's (``llm-rubric``,
``model-graded-closedqa``, ``factuality``, ``g-eval``, ``select-best``…) when there is one,
else the whole result's. A result with an ``error`` and no grading is unreadable. The judge
is the grading provider the assertion names, else the test case's ``options.provider``, else
``DEFAULT_GRADER``: promptfoo's own default grader, which its export does not name. A grader
reply promptfoo could not read (its model-graded matchers' ``fail()``: a component result with
no ``assertion``, ``pass`` false, score 0 and a reason such as "Could not extract JSON from
llm-rubric response") is no grade of 0: it is an Invalid judgment with that reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from judgeprobe import JudgeprobeError
from judgeprobe.core.records import document_hash
from judgeprobe.logs.formats import LogFormat, ReadOptions, Sniff, record_rows, register_format
from judgeprobe.logs.rows import BadRow, Row, ScoreRow, Skipped, Where
from judgeprobe.logs.source import Record, json_document, text

PROTOCOL = "promptfoo"
DEFAULT_GRADER = "promptfoo-default-grader"
"""The judge of a model-graded assertion that names no provider (promptfoo then grades with
its default provider for the API keys it found, and writes none of it in the results)."""


def is_promptfoo(document: Any) -> bool:
    """A promptfoo output file: ``results`` holding a list of results (or being one)."""
    if not isinstance(document, dict) or "results" not in document:
        return False
    inner = document["results"]
    return isinstance(inner, list) or (isinstance(inner, dict) and "results" in inner)


def results(path: Path) -> Iterator[tuple[Where, Record | BadRow]]:
    """Each result of the file, numbered from 1."""
    document = json_document(path)
    if not is_promptfoo(document):
        raise JudgeprobeError(f"{path}: not a promptfoo results file (no results list)")
    inner = document["results"]
    found = inner["results"] if isinstance(inner, dict) else inner
    if not isinstance(found, list):
        raise JudgeprobeError(f"{path}: results.results is not a list")
    for number, got in enumerate(found, start=1):
        yield Where(str(path), number), got if isinstance(got, dict) else BadRow("not an object")


def _graded(grading: Record) -> tuple[object, str, str, bool]:
    """The model-graded assertion's score, reason and grader, else the whole result's.

    The last value says whether the grader's reply went unread (promptfoo's ``fail()``).
    """
    parts = [p for p in grading.get("componentResults") or [] if isinstance(p, dict)]
    for part in parts:
        assertion = part.get("assertion") or {}
        kind = str(assertion.get("type") or "")
        if kind.startswith(("llm-", "model-graded", "g-eval", "factuality", "select-best")):
            return (
                part.get("score"),
                str(part.get("reason") or ""),
                _name(assertion.get("provider")),
                False,
            )
    for part in parts:
        if "assertion" not in part and part.get("pass") is False:  # promptfoo's fail()
            return part.get("score"), str(part.get("reason") or ""), "", True
    return grading.get("score"), str(grading.get("reason") or ""), "", False


def _name(value: object) -> str:
    if isinstance(value, dict):
        return str(value.get("label") or value.get("id") or "")
    return str(value or "")


def promptfoo_rows(where: Where, record: Record) -> Iterator[ScoreRow]:
    """One result as a score of its provider's output on its test case."""
    vars_ = record.get("vars") or {}
    prompt = record.get("prompt") or {}
    question = text(prompt.get("raw")) if isinstance(prompt, dict) else text(prompt)
    case = record.get("testIdx", record.get("testCase", {}).get("description"))
    qid = str(case) if case is not None else document_hash(orjson.dumps(vars_).decode())
    response = record.get("response") or {}
    output = response.get("output") if isinstance(response, dict) else None
    grading = record.get("gradingResult")
    options = (record.get("testCase") or {}).get("options") or {}
    score: float | None = None
    why, reason, kind = "", "", ""
    if isinstance(grading, dict):
        raw, reason, kind, failed = _graded(grading)
        if failed:
            why = f"the grader's reply was not read by promptfoo ({reason})"
        elif isinstance(raw, int | float) and not isinstance(raw, bool):
            score = float(raw)
        else:
            why = f"no score in the grading result ({raw!r})"
    else:
        raw = None
        why = f"not graded: {record.get('error') or 'no gradingResult'}"
    yield ScoreRow(
        where=where, judge=kind or _name(options.get("provider")) or DEFAULT_GRADER,
        protocol=PROTOCOL, question_id=qid, turn=1,
        generator=_name(record.get("provider")) or "provider", score=score, raw=str(raw),
        explanation=reason, invalid_reason=why, question=question,
        response=output if isinstance(output, str) else None,
    )  # fmt: skip


def _rows(path: Path, options: ReadOptions) -> Iterator[Row | Skipped]:
    del options
    return record_rows(results(path), promptfoo_rows)


def _is_promptfoo(sniff: Sniff) -> bool:
    return is_promptfoo(sniff.document)


register_format(LogFormat("promptfoo", _is_promptfoo, _rows, help="promptfoo results.json"))
