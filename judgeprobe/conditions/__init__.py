"""Cue conditions as data: the label or badge each candidate wears, and which one it favours.

A condition is three strings. ``label_1``/``label_2`` are shown next to candidate 1 and 2
(empty means no label); they may use ``{source_1}``/``{source_2}``, the candidates' true
provenance. ``target`` names the candidate the cue favours: ``A``, ``B``, ``none``, or
``label:TEXT`` for whichever candidate wears the label TEXT on that item.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from judgeprobe import JudgeprobeError, first_error
from judgeprobe.records import Item, Target

_FIELD = re.compile(r"\{(source_1|source_2)\}")


class Condition(BaseModel):
    """A cue condition, as written in a TOML table."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    label_1: str = ""
    label_2: str = ""
    target: str = "none"
    description: str = ""

    @field_validator("target")
    @classmethod
    def _target_form(cls, value: str) -> str:
        if value in ("A", "B", "none") or (value.startswith("label:") and len(value) > 6):
            return value
        raise ValueError("target must be A, B, none or label:TEXT")

    @field_validator("label_1", "label_2")
    @classmethod
    def _placeholders(cls, value: str) -> str:
        leftover = _FIELD.sub("", value)
        if "{" in leftover or "}" in leftover:
            raise ValueError("labels may only use the placeholders {source_1} and {source_2}")
        return value

    def resolve(self, item: Item) -> ResolvedCue:
        """Fill the labels for one item and work out which candidate the cue favours."""
        fields = {"source_1": item.source_1, "source_2": item.source_2}
        label_1 = _FIELD.sub(lambda m: fields[m.group(1)], self.label_1)
        label_2 = _FIELD.sub(lambda m: fields[m.group(1)], self.label_2)
        target: Target
        if self.target.startswith("label:"):
            wanted = self.target[len("label:") :]
            if label_1 == wanted and label_2 != wanted:
                target = "A"
            elif label_2 == wanted and label_1 != wanted:
                target = "B"
            else:
                raise JudgeprobeError(
                    f"condition {self.name}: item {item.item_id} has no single candidate "
                    f"labelled {wanted!r} (labels {label_1!r}, {label_2!r})"
                )
        else:
            target = self.target  # type: ignore[assignment]
        return ResolvedCue(label_1=label_1, label_2=label_2, target=target)


@dataclass(frozen=True, slots=True)
class ResolvedCue:
    """A condition applied to one item, in candidate terms."""

    label_1: str
    label_2: str
    target: Target


def parse_conditions(tables: dict[str, Any], origin: str) -> dict[str, Condition]:
    """Turn ``{name: {label_1:…, …}}`` TOML tables into conditions, one clear error per problem."""
    out: dict[str, Condition] = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise JudgeprobeError(f"{origin}: condition {name} must be a table")
        try:
            out[name] = Condition(name=name, **table)
        except ValidationError as exc:
            raise JudgeprobeError(f"{origin}: condition {name}: {first_error(exc)}") from None
    return out


def builtin_conditions() -> dict[str, Condition]:
    """The paper's cue conditions, from the packaged ``builtin.toml``."""
    text = resources.files(__package__).joinpath("builtin.toml").read_text(encoding="utf-8")
    return parse_conditions(tomllib.loads(text), "builtin conditions")
