"""Condition files: a config's ``[cues]`` tables and the packaged ones, read into conditions."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

from pydantic import ValidationError

from judgeprobe import JudgeprobeError, first_error
from judgeprobe.conditions.kinds import Condition, of_kind
from judgeprobe.conditions.names import PLACEBO


def parse_conditions(tables: dict[str, Any], origin: str) -> dict[str, Condition]:
    """Turn ``{name: {label_1:…, …}}`` TOML tables into conditions, one clear error per problem."""
    out: dict[str, Condition] = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise JudgeprobeError(f"{origin}: condition {name} must be a table")
        try:
            out[name] = of_kind(name, table)
        except ValidationError as exc:
            raise JudgeprobeError(f"{origin}: condition {name}: {first_error(exc)}") from None
        except ValueError as exc:
            raise JudgeprobeError(f"{origin}: condition {name}: {exc}") from None
    return out


BUNDLED = ("builtin.toml", "battery.toml", "selfpref.toml")
"""The packaged condition files: the paper's cues, the cue battery, the self-preference arms."""


@cache
def _bundled() -> dict[str, Condition]:
    out: dict[str, Condition] = {}
    for name in BUNDLED:
        text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
        out |= parse_conditions(tomllib.loads(text), f"bundled conditions {name}")
    for condition in out.values():
        if condition.placebo and condition.placebo not in out:
            raise JudgeprobeError(
                f"bundled condition {condition.name}: no placebo {condition.placebo}"
            )
    return out


def builtin_conditions() -> dict[str, Condition]:
    """The bundled cue conditions: the paper's (``builtin.toml``) and the battery's."""
    return dict(_bundled())


def family_of(condition: str) -> str:
    """The cue family of a bundled condition; "" for the paper's cues and unknown names."""
    found = _bundled().get(condition)
    return found.family if found else ""


def family_members(family: str) -> list[str]:
    """The bundled conditions of a cue family, in file order."""
    return [name for name, c in _bundled().items() if family and c.family == family]


def is_placebo(condition: str) -> bool:
    """Whether a condition is a placebo: ``Placebo``, or one a bundled condition names."""
    return condition == PLACEBO or any(c.placebo == condition for c in _bundled().values())


def placebo_of(condition: str, default: str = PLACEBO) -> str:
    """The placebo a bundled condition is compared with (``default`` when it names none)."""
    found = _bundled().get(condition)
    return found.placebo if found and found.placebo else default
