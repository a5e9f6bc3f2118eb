"""Annotation tables for the alt-test: the AltTest repository's JSON layout, read whole or refused.

``human_annotations.json`` is ``{annotator: {item: label}}``; ``llm_annotations.json`` is
``{llm: {item: label}}`` (several judges) or ``{item: label}`` (one). A label is a string,
a number or a boolean; null is no label. Under accuracy labels are compared as text (a number
as its value, so 1 and 1.0 are one category); under neg_rmse every label must be a number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.metrics.alttest import ACCURACY, NEG_RMSE, Metric

Labels = dict[str, object]


@dataclass(frozen=True)
class Case:
    """One judge to test: the annotators' labels and its own, and how to align them."""

    judge: str
    protocol: str
    humans: pl.DataFrame  # item_id, annotator, label
    judge_labels: pl.DataFrame  # item_id, label
    metric: Metric
    source: str  # where the human labels came from, in words


def _read(path: Path, flag: str) -> dict[str, object]:
    if not path.is_file():
        raise JudgeprobeError(f"{flag} {path}: no such file")
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise JudgeprobeError(f"{flag} {path}: not JSON ({exc})") from None
    if not isinstance(found, dict) or not found:
        raise JudgeprobeError(f"{flag} {path}: expected a non-empty JSON object")
    return cast(dict[str, object], found)


def _labels(value: object, where: str) -> Labels:
    if not isinstance(value, dict):
        raise JudgeprobeError(f"{where}: expected an object of item: label")
    for item, label in value.items():
        if label is not None and not isinstance(label, str | int | float | bool):
            raise JudgeprobeError(f"{where}: item {item!r}: label {label!r} is not a value")
    return cast(Labels, value)


def _is_number(label: object) -> bool:
    return isinstance(label, int | float) and not isinstance(label, bool)


def _text(label: object) -> str:
    if isinstance(label, bool):
        return "true" if label else "false"
    return repr(float(cast(float, label))) if _is_number(label) else str(label)


def _column(labels: list[object], metric: Metric, where: str) -> pl.Series:
    if metric == ACCURACY:
        return pl.Series([None if x is None else _text(x) for x in labels], dtype=pl.String)
    bad = next((x for x in labels if x is not None and not _is_number(x)), None)
    if bad is not None:
        raise JudgeprobeError(f"{where}: label {bad!r} is not a number (--metric neg_rmse)")
    return pl.Series([None if x is None else float(cast(float, x)) for x in labels],
                     dtype=pl.Float64)  # fmt: skip


def _judges(found: dict[str, object], flag: str, llm: str | None) -> dict[str, Labels]:
    nested = all(isinstance(v, dict) for v in found.values())
    if not nested and any(isinstance(v, dict) for v in found.values()):
        raise JudgeprobeError(f"{flag}: mixes judges ({{llm: {{item: label}}}}) and labels")
    judges = (
        {str(k): _labels(v, f"{flag}: {k}") for k, v in found.items()}
        if nested
        else {"llm": _labels(found, flag)}
    )
    if llm is None:
        return judges
    if llm not in judges:
        names = ", ".join(sorted(judges))
        raise JudgeprobeError(f"--llm {llm}: not in {flag} (it holds {names})")
    return {llm: judges[llm]}


def file_cases(humans: Path, llms: Path, llm: str | None, metric: Metric | None) -> list[Case]:
    """One case per LLM of the file (``llm``: that one only), every label checked."""
    people = {str(k): _labels(v, f"--humans: annotator {k}")
              for k, v in _read(humans, "--humans").items()}  # fmt: skip
    judges = _judges(_read(llms, "--llm-annotations"), "--llm-annotations", llm)
    everything = [x for p in (*people.values(), *judges.values()) for x in p.values()]
    if metric is None:
        numbers = all(_is_number(x) for x in everything if x is not None)
        metric = NEG_RMSE if numbers else ACCURACY
    rows = [(str(i), who, x) for who, got in people.items() for i, x in got.items()]
    human = pl.DataFrame({
        "item_id": pl.Series([r[0] for r in rows], dtype=pl.String),
        "annotator": pl.Series([r[1] for r in rows], dtype=pl.String),
        "label": _column([r[2] for r in rows], metric, "--humans"),
    })  # fmt: skip
    cases = []
    for name, got in judges.items():
        judged = pl.DataFrame({
            "item_id": pl.Series(list(map(str, got)), dtype=pl.String),
            "label": _column(list(got.values()), metric, f"--llm-annotations: {name}"),
        })  # fmt: skip
        cases.append(Case(name, "", human, judged, metric, f"--humans {humans}"))
    return cases
