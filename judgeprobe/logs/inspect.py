"""inspect_ai eval logs (``.eval`` and ``.json``), read with inspect_ai's own log reader.

inspect_ai is an optional extra (``pip install 'judgeprobe[logs]'``); without it an eval log
is one error line. Each sample's score is one ``ScoreRow``: per scorer, its value (``C``/``P``/
``I`` as 1, ½, 0, or a number), the grader's explanation, the sample's input as the question
and its output as the response, the task's model as the generator. The protocol is the scorer;
the judge is the model that graded (``grading_model``), so two evals graded by one model are
one judge whatever their scorers. A value that is neither (inspect_ai's unscored NaN: the
grade did not parse) is an Invalid judgment with its reason; a sample with no score at all
(an eval run without scoring) is a skipped row, not a judgment.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judgeprobe import JudgeprobeError
from judgeprobe.logs.formats import LogFormat, ReadOptions, Sniff, register_format
from judgeprobe.logs.rows import ScoreRow, Skipped, Where
from judgeprobe.prompts.task import Task

GRADES = {"C": 1.0, "P": 0.5, "I": 0.0}
"""inspect_ai's CORRECT, PARTIAL and INCORRECT."""
EXTRA = "pip install 'judgeprobe[logs]'"
MODEL_GRADED = "model_graded_"
"""inspect_ai's model-graded scorers (``model_graded_qa``, ``model_graded_fact``): without a
model or a ``grader`` role they grade with the eval's own model (inspect_ai's precedence:
``model`` > ``model_role`` > the default model)."""


def is_eval_json(document: Any) -> bool:
    """An inspect_ai log written as JSON: its ``eval`` spec and a ``status``."""
    return (
        isinstance(document, dict)
        and isinstance(document.get("eval"), dict)
        and ("status" in document)
    )


def _read(path: Path) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise JudgeprobeError(
            f"{path}: an inspect_ai eval log; reading it needs inspect_ai ({EXTRA})"
        ) from None
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # inspect_ai raises several types for a bad file
        raise JudgeprobeError(f"{path}: inspect_ai cannot read it ({type(exc).__name__})") from None


def _text(value: Any) -> str:
    """A sample's input: a string, or its chat messages' text joined."""
    if isinstance(value, str):
        return value
    parts = [getattr(m, "text", None) or str(getattr(m, "content", "")) for m in value or []]
    return "\n\n".join(parts)


def _value(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return None if math.isnan(value) else float(value)
    if isinstance(value, str):
        return GRADES.get(value.strip().upper())
    return None


def _names(config: Any) -> str:
    """A model setting's name(s): one ``ModelConfig``/string, or a list of them joined by +."""
    found = config if isinstance(config, list) else [config]
    names = [str(getattr(c, "model", c) or "") for c in found if c is not None]
    return "+".join(n for n in names if n)


def _called(sample: Any) -> dict[str, str]:
    """Each scorer's first model call in the sample's events (span or step style)."""
    spans: dict[str, str] = {}
    current = ""
    out: dict[str, str] = {}
    for event in getattr(sample, "events", None) or []:
        kind = getattr(event, "event", "")
        if kind == "span_begin" and getattr(event, "type", None) == "scorer":
            spans[str(event.id)] = str(event.name)
        elif kind == "step" and getattr(event, "type", None) == "scorer":
            current = str(event.name) if getattr(event, "action", "") == "begin" else ""
        elif kind == "model":
            scorer = spans.get(str(getattr(event, "span_id", None)), current)
            if scorer and scorer not in out:
                out[scorer] = str(event.model)
    return out


def _graded_by(score: Any) -> str:
    """The model a model-graded score's own ``grading`` metadata names (its reply's model)."""
    grading = (getattr(score, "metadata", None) or {}).get("grading")
    for message in grading if isinstance(grading, list) else []:
        model = message.get("model") if isinstance(message, dict) else None
        if model:
            return str(model)
    return ""


def grading_model(log: Any, sample: Any, scorer: str, score: Any) -> str:
    """Who graded a score: the first name found, in inspect_ai's own precedence.

    The model the scorer called, else its configured model, else the eval's ``grader`` role,
    else the model its grading metadata names, else (a model-graded scorer) the eval's own
    model, else the scorer itself (a rule such as ``match``).
    """
    spec = log.eval
    options = {s.name: s.options or {} for s in spec.scorers or []}.get(scorer, {})
    roles = spec.model_roles or {}
    called = _called(sample).get(scorer, "")
    default = str(spec.model) if scorer.startswith(MODEL_GRADED) else ""
    for name in (called, _names(options.get("model")), _names(roles.get("grader")),
                 _graded_by(score), default):  # fmt: skip
        if name:
            return name
    return scorer


def eval_rows(path: Path) -> Iterator[ScoreRow | Skipped]:
    """Every (sample, scorer) score of one eval log; ``Skipped`` for a sample not scored."""
    log = _read(path)
    generator = str(log.eval.model)
    for number, sample in enumerate(log.samples or [], start=1):
        where = Where(str(path), number)
        if not sample.scores:
            yield Skipped(where, f"sample {sample.id} has no score (the eval was not scored)")
            continue
        output = getattr(sample.output, "completion", None) if sample.output else None
        for scorer, score in sample.scores.items():
            value = _value(score.value)
            why = "" if value is not None else _unreadable(score)
            yield ScoreRow(
                where=where, judge=grading_model(log, sample, scorer, score), protocol=scorer,
                question_id=str(sample.id), turn=1, generator=generator, score=value,
                raw=str(score.value), explanation=str(score.explanation or ""),
                invalid_reason=why, question=_text(sample.input),
                response=output if isinstance(output, str) else None,
            )  # fmt: skip


def _unreadable(score: Any) -> str:
    """Why a score value is no grade: inspect_ai's unscored reason, else the value itself."""
    metadata = getattr(score, "metadata", None) or {}
    reason = getattr(score, "reason", None) or metadata.get("unscored_reason")
    if reason:
        return f"unscored by inspect_ai ({reason})"
    return f"score value {score.value!r} is not C/P/I or a number"


def _is_eval(sniff: Sniff) -> bool:
    return sniff.path.suffix == ".eval" or is_eval_json(sniff.document)


def _rows(path: Path, options: ReadOptions) -> Iterator[ScoreRow | Skipped]:
    del options
    return eval_rows(path)


register_format(
    LogFormat(
        "inspect", _is_eval, _rows, help="inspect_ai .eval/.json eval logs", task=Task(preset="qa")
    )
)
