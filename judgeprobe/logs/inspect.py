"""inspect_ai eval logs (``.eval`` and ``.json``), read with inspect_ai's own log reader.

inspect_ai is an optional extra (``pip install 'judgeprobe[logs]'``); without it an eval log
is one error line. Each sample's model-graded score is one ``ScoreRow``: per scorer, its value
(``C``/``P``/``I`` as 1, ½, 0, or a number), the grader's explanation, the sample's input as
the question and its output as the response, the task's model as the generator. The judge is
the ``grader`` model role when the eval names one, else the scorer; the protocol is the
scorer. A sample without that score, or with a value that is neither, is unreadable.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judgeprobe import JudgeprobeError
from judgeprobe.logs.formats import LogFormat, ReadOptions, Sniff, register_format
from judgeprobe.logs.rows import ScoreRow, Where
from judgeprobe.prompts.task import Task

GRADES = {"C": 1.0, "P": 0.5, "I": 0.0}
"""inspect_ai's CORRECT, PARTIAL and INCORRECT."""
EXTRA = "pip install 'judgeprobe[logs]'"


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
        return float(value)
    if isinstance(value, str):
        return GRADES.get(value.strip().upper())
    return None


def eval_rows(path: Path) -> Iterator[ScoreRow]:
    """Every (sample, scorer) score of one eval log."""
    log = _read(path)
    spec = log.eval
    roles = getattr(spec, "model_roles", None) or {}
    grader = roles.get("grader")
    grader_name = str(getattr(grader, "model", "") or "") if grader is not None else ""
    generator = str(spec.model)
    for number, sample in enumerate(log.samples or [], start=1):
        where = Where(str(path), number)
        output = getattr(sample.output, "completion", None) if sample.output else None
        for scorer, score in (sample.scores or {}).items():
            value = _value(score.value)
            why = (
                "" if value is not None else f"score value {score.value!r} is not C/P/I or a number"
            )
            yield ScoreRow(
                where=where, judge=grader_name or scorer, protocol=scorer,
                question_id=str(sample.id), turn=1, generator=generator, score=value,
                raw=str(score.value), explanation=str(score.explanation or ""), invalid_reason=why,
                question=_text(sample.input), response=output if isinstance(output, str) else None,
            )  # fmt: skip


def _is_eval(sniff: Sniff) -> bool:
    return sniff.path.suffix == ".eval" or is_eval_json(sniff.document)


def _rows(path: Path, options: ReadOptions) -> Iterator[ScoreRow]:
    del options
    return eval_rows(path)


register_format(
    LogFormat(
        "inspect", _is_eval, _rows, help="inspect_ai .eval/.json eval logs", task=Task(preset="qa")
    )
)
