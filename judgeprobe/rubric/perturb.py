"""Counterfactual variants of a rubric item: the response reversed, or the criterion negated.

Each variant changes one side and keeps the other fixed. Its text comes from a source:

- ``provided``: the item's own ``reversed_response`` / ``negated_criterion``;
- ``llm``: rewritten by the judge endpoint (template ``rubric_reverse_v1`` or
  ``rubric_negate_v1``), cached and resumable like every other request;
- ``rule`` (criteria only): a deterministic rewrite of the leading verb phrase
  ("Recommends X" → "Does not recommend X", "Fails to X" → "Xs", "Is X" → "Is not X").
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from judgeprobe.rubric.data import RubricItem

Variant = Literal["original", "reversed_response", "negated_criterion"]
Source = Literal["provided", "llm", "rule"]
PERTURBATIONS: dict[str, Variant] = {
    "response": "reversed_response",
    "criterion": "negated_criterion",
}
REWRITE_TEMPLATES = {
    "reversed_response": "rubric_reverse_v1",
    "negated_criterion": "rubric_negate_v1",
}
REWRITE_MAX_TOKENS = {"reversed_response": 480, "negated_criterion": 120}


class RewriteReply(BaseModel):
    """An LLM-written counterfactual text."""

    model_config = ConfigDict(extra="forbid", title="rubric_rewrite")

    text: str = Field(min_length=1)


def provided(item: RubricItem, variant: Variant) -> str:
    """The item's own counterfactual text for ``variant`` ("" when it has none)."""
    if variant == "reversed_response":
        return item.reversed_response
    if variant == "negated_criterion":
        return item.negated_criterion
    return ""


# --- rule-based criterion negation ------------------------------------------------------

_COPULAS = {"is": "is not", "are": "are not", "has": "does not have", "can": "cannot"}
_NEGATED = re.compile(r"^(does not|doesn't|do not|fails to|never)\s+(\S+)(.*)$", re.I | re.S)
_SIBILANT = ("s", "x", "z", "ch", "sh", "o")


def third_person(verb: str) -> str:
    """Recommend → recommends, identify → identifies, discuss → discusses."""
    low = verb.lower()
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    if low.endswith(_SIBILANT):
        return verb + "es"
    return verb + "s"


def base_form(verb: str) -> str:
    """Recommends → recommend, identifies → identify, discusses → discuss."""
    low = verb.lower()
    if low.endswith("ies") and len(low) > 4:
        return verb[:-3] + "y"
    if low.endswith(("sses", "shes", "ches", "xes", "zes", "oes")):
        return verb[:-2]
    if low.endswith("s") and not low.endswith("ss"):
        return verb[:-1]
    return verb


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def negate_rule(criterion: str) -> str:
    """Negate a rubric criterion's leading verb phrase; a generic wrapper when none is found."""
    text = criterion.strip()
    undo = _NEGATED.match(text)
    if undo:
        verb, rest = undo.group(2), undo.group(3)
        return _capital(third_person(verb) + rest)
    first, _, rest = text.partition(" ")
    low = first.lower()
    if low in _COPULAS:
        return _capital(_COPULAS[low]) + (" " + rest if rest else "")
    if low.isalpha() and low.endswith("s") and not low.endswith("ss") and rest:
        return f"Does not {base_form(low)} {rest}"
    return f"The response does not meet this criterion: {text}"
