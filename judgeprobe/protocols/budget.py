"""Token budgets sized from the task.

A stage's ``max_tokens`` is the most its reply schema lets a judge write, at the judge's measured
verbosity.

Every reply schema bounds its free-text fields (``maxLength``, characters) and its lists
(``maxItems``), so ``reply_tokens`` can walk it and add up the worst case: text and keys at
``chars_per_token`` (characters per completion token, measured on the judge's own replies:
``bench/protocol_grid.py`` prints it), plus a fixed allowance per value for the quotes,
colon, comma and the whitespace a grammar lets a judge put between values. A reply that
keeps to its schema fits its budget unless the judge writes denser text than measured or the
backend ignores the bounds; then the engine escalates once (``judgeprobe.engine.client``).
A configured ``*_max_tokens`` replaces a sized budget; the manifest records every budget.

The other walk of a reply schema, ``least``, gives its shortest value: the stand-in reply of
the bill's dry run and the self-test judge's answer to a request that judges nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from typing import Any

import orjson
from pydantic import BaseModel

from judgeprobe.text.tokens import CHARS_PER_TOKEN

MARGIN = 1.1  # headroom over the computed worst case
PUNCTUATION = 3  # tokens per value: quotes or colon, comma, whitespace between values
UNBOUNDED_CHARS = 2000  # a text field without maxLength (the protocols' schemas have none)
UNBOUNDED_ITEMS = 8  # a list without maxItems (likewise)
ROUND = 16  # budgets are rounded up to a multiple of this


def reply_tokens(schema: Mapping[str, Any], chars_per_token: float) -> float:
    """The most tokens a reply conforming to ``schema`` can take (pydantic's JSON schema)."""
    defs: Mapping[str, Any] = schema.get("$defs", {})

    def text(chars: float) -> float:
        return chars / chars_per_token + PUNCTUATION

    def walk(node: Mapping[str, Any]) -> float:
        if "$ref" in node:
            return walk(_target(node, defs))
        if "enum" in node or "const" in node:  # short literals: a token per character at worst
            values = node.get("enum", [node.get("const")])
            return max(len(orjson.dumps(v)) for v in values) + PUNCTUATION
        kind = node.get("type")
        if kind == "object":
            props: Mapping[str, Any] = node.get("properties", {})
            return PUNCTUATION + sum(text(len(k)) + walk(v) for k, v in props.items())
        if kind == "array":
            items = int(node.get("maxItems", UNBOUNDED_ITEMS))
            return PUNCTUATION + items * walk(node["items"])
        if kind == "string":
            return text(int(node.get("maxLength", UNBOUNDED_CHARS)))
        return 1 + PUNCTUATION  # integer, number, boolean, null

    return walk(schema)


def least(node: Mapping[str, Any], defs: Mapping[str, Any] | None = None) -> Any:
    """The shortest value a (pydantic) JSON schema allows."""
    defs = node.get("$defs", {}) if defs is None else defs
    if "$ref" in node:
        return least(_target(node, defs), defs)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return node["enum"][0]
    for choice in ("anyOf", "oneOf", "allOf"):
        if choice in node:
            return least(node[choice][0], defs)
    kind = node.get("type")
    if kind == "object":
        props: Mapping[str, Any] = node.get("properties", {})
        return {k: least(v, defs) for k, v in props.items()}
    if kind == "array":
        return [least(node.get("items", {}), defs) for _ in range(int(node.get("minItems", 0)))]
    if kind == "string":
        return "x" * int(node.get("minLength", 0))
    if kind in ("integer", "number"):
        low = node.get("minimum", node.get("exclusiveMinimum", -1) + 1)
        return int(low) if kind == "integer" else float(low)
    if kind == "boolean":
        return False
    return None


def _target(node: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    """The definition a ``$ref`` node points to."""
    found: Mapping[str, Any] = defs[node["$ref"].rsplit("/", 1)[-1]]
    return found


@cache
def size_budget(
    model: type[BaseModel], chars_per_token: float = CHARS_PER_TOKEN, margin: float = MARGIN
) -> int:
    """A stage's ``max_tokens``: its schema's worst case with ``margin``, rounded up."""
    worst = reply_tokens(model.model_json_schema(), chars_per_token) * margin
    return int(math.ceil(worst / ROUND) * ROUND)


def stage_budgets(
    replies: Mapping[str, type[BaseModel]],
    chars_per_token: float = CHARS_PER_TOKEN,
    margin: float = MARGIN,
    overrides: Mapping[str, int | None] | None = None,
) -> dict[str, int]:
    """Every stage's budget by name: sized from its reply model unless overridden."""
    fixed = {k: v for k, v in (overrides or {}).items() if v is not None}
    return {
        stage: fixed.get(stage) or size_budget(model, chars_per_token, margin)
        for stage, model in replies.items()
    }
