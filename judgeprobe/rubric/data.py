"""Rubric items: one (conversation, candidate response, criterion) to judge, and their loaders.

Two input shapes, told apart per row:

- **HealthBench style** (JSONL): ``prompt`` is a list of chat messages, the response is
  ``completion`` (or ``response``), and the criteria come as ``rubrics`` (a list of
  ``{criterion, points, tags}``) or as one ``rubric`` string. Each criterion becomes one item.
- **Generic** (JSONL or CSV): one item per row with ``criterion``, ``response`` and either
  ``prompt`` (text) or ``conversation`` (chat messages).

Optional on either: ``reversed_response`` and ``negated_criterion`` (the provided
counterfactuals), ``expected`` (``satisfied``/``violated``: what the original response should
get, which fixes the desired direction of a response reversal), ``split`` (for cross-split
transfer), ``points``, ``tags``, and ``judge_label`` (an existing judge verdict, so the
rubric-only probe can run without judging).
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from judgeprobe import JudgeprobeError, first_error
from judgeprobe.core.corpus import jsonl_rows, read_rows
from judgeprobe.core.layouts import Message
from judgeprobe.core.records import RubricVerdict

BUNDLED = {"bundled:rubric": "sample.jsonl"}


class RubricItem(BaseModel):
    """One criterion to check against one candidate response in one conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    item_id: str = Field(min_length=1)
    conversation: tuple[Message, ...] = Field(min_length=1)
    response: str = Field(min_length=1)
    criterion: str = Field(min_length=1)
    points: float | None = None
    tags: tuple[str, ...] = ()
    split: str = ""
    domain: str = ""
    expected: RubricVerdict | None = None
    reversed_response: str = ""
    negated_criterion: str = ""
    judge_label: RubricVerdict | None = None

    @field_validator("expected", "judge_label", mode="before")
    @classmethod
    def _verdict_words(cls, value: Any) -> Any:
        """Accept booleans and 1/0 as well as the words (``criteria_met`` style)."""
        if value in ("", None):
            return None
        if isinstance(value, bool) or value in (0, 1, "0", "1", "true", "false"):
            return "satisfied" if str(value).lower() in ("1", "true") else "violated"
        return value


_ITEM_FIELDS = set(RubricItem.model_fields) - {"conversation"}


def _conversation(row: dict[str, Any]) -> Any:
    prompt = row.get("conversation", row.get("prompt"))
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return prompt


def _tags(value: Any) -> Any:
    if isinstance(value, str):  # CSV: "a;b"
        return [t.strip() for t in value.split(";") if t.strip()]
    return value if value is not None else ()


def _common(row: dict[str, Any], item_id: str) -> dict[str, Any]:
    base = {k: v for k, v in row.items() if k in _ITEM_FIELDS and v not in (None, "")}
    base.update(item_id=item_id, conversation=_conversation(row))
    if "response" not in base and row.get("completion"):
        base["response"] = row["completion"]
    base["tags"] = _tags(row.get("tags", row.get("example_tags")))
    return base


def _healthbench(row: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """One item per criterion of a HealthBench-style row."""
    stem = str(row.get("prompt_id") or row.get("item_id") or f"row{n}")
    if row.get("completion_id"):
        stem = f"{stem}/{row['completion_id']}"
    base = _common(row, stem)
    base.pop("criterion", None)
    rubrics = row.get("rubrics")
    if rubrics is None:
        rubrics = [{"criterion": row.get("rubric")}]
        labels = row.get("binary_labels")
        if isinstance(labels, list) and labels and "expected" not in base:
            base["expected"] = sum(bool(v) for v in labels) * 2 > len(labels)
    if not isinstance(rubrics, list) or not rubrics:
        raise JudgeprobeError("rubrics must be a non-empty list")
    out = []
    for k, rubric in enumerate(rubrics):
        if not isinstance(rubric, dict):
            raise JudgeprobeError(f"rubrics[{k}] must be an object with a criterion")
        extra = {
            "criterion": rubric.get("criterion"),
            "points": rubric.get("points"),
            "tags": [*base["tags"], *_tags(rubric.get("tags"))],
        }
        own = _ITEM_FIELDS - {"criterion", "points", "tags"}  # e.g. a per-criterion expected
        extra.update({k2: v for k2, v in rubric.items() if k2 in own and v not in (None, "")})
        suffix = f"#{k}" if len(rubrics) > 1 else ""
        out.append({**base, **extra, "item_id": f"{stem}{suffix}"})
    return out


def _to_items(rows: list[dict[str, Any]], origin: str) -> list[RubricItem]:
    items: list[RubricItem] = []
    seen: set[str] = set()
    for n, row in enumerate(rows, start=1):
        try:
            if "rubrics" in row or "rubric" in row:
                parts = _healthbench(row, n)
            else:
                parts = [_common(row, str(row.get("item_id") or f"row{n}"))]
            for part in parts:
                item = RubricItem.model_validate(part)
                if item.item_id in seen:
                    raise JudgeprobeError(f"duplicate item_id {item.item_id!r}")
                seen.add(item.item_id)
                items.append(item)
        except ValidationError as exc:
            raise JudgeprobeError(f"{origin}: row {n}: {first_error(exc)}") from None
        except JudgeprobeError as exc:
            raise JudgeprobeError(f"{origin}: row {n}: {exc}") from None
    if not items:
        raise JudgeprobeError(f"{origin}: no rubric items")
    return items


def load_rubric_items(source: str, limit: int = 0) -> list[RubricItem]:
    """Items from ``bundled:rubric`` or a ``.jsonl``/``.csv`` file; ``limit`` > 0 keeps N."""
    if source in BUNDLED:
        data = resources.files("judgeprobe").joinpath("data", "rubric", BUNDLED[source])
        rows = jsonl_rows(data.read_bytes(), source)
    else:
        path = Path(source)
        if not path.is_file():
            raise JudgeprobeError(f"rubric items {source}: no such file")
        rows = read_rows(path, f"rubric items {source}", ("jsonl", "csv"))
    items = _to_items(rows, source)
    return items[:limit] if limit else items


def items_digest(items: list[RubricItem]) -> str:
    """A content hash of the items, recorded in the run manifest."""
    body = orjson.dumps([i.model_dump() for i in items], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(body).hexdigest()[:16]
