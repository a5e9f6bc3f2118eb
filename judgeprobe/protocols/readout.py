"""Reading a judge's own reply: the rules a verdict format and a score format share.

A pattern's last match counts and every match must agree; a JSON reply holds its value under
one key and its explanation under another, or else the rest of the object is the explanation.
``protocols.own`` reads verdicts with them, ``protocols.pointwise`` scores.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

from judgeprobe.engine.validate import ReplyError, json_body

V = TypeVar("V")


def last_agreeing(
    pattern: str, body: str, finish_reason: str | None, what: str, read: Callable[[str], V]
) -> tuple[V, str]:
    """The last match's value (its first group when it has one) and the reply without matches.

    ``what`` names the value in errors ("verdict", "score"); ``read`` turns a matched token
    into it (raising ReplyError). No match, or matches that disagree, fail.
    """
    matches = list(re.finditer(pattern, body))
    if not matches:
        cut = finish_reason == "length"
        why = " (hit max_tokens)" if cut else ""
        raise ReplyError(f"no {what} matching {pattern!r}{why}", truncated=cut)
    said = [m.group(1) if m.re.groups else m.group(0) for m in matches]
    values = [read(token) for token in said]
    if len(set(values)) > 1:
        raise ReplyError(f"ambiguous {what}: {', '.join(dict.fromkeys(said))}")
    return values[-1], re.sub(pattern, "", body).strip()


def keyed(body: str, finish_reason: str | None, key: str, explanation_key: str) -> tuple[Any, str]:
    """The raw value under ``key`` of a JSON reply, and its explanation.

    The explanation is the text under ``explanation_key`` when the format names one, else the
    rest of the object as JSON ("" when nothing else is there).
    """
    data = json_body(body, finish_reason)
    if not isinstance(data, dict) or key not in data:
        raise ReplyError(f"no {key!r} key in the JSON reply")
    if explanation_key:
        explanation = data.get(explanation_key)
        if not isinstance(explanation, str):
            raise ReplyError(f"no {explanation_key!r} text in the JSON reply")
        return data[key], explanation
    rest = {k: v for k, v in data.items() if k != key}
    return data[key], orjson.dumps(rest).decode() if rest else ""


def object_schema(
    title: str, key: str, value: dict[str, Any], explanation_key: str
) -> dict[str, Any]:
    """The schema a backend enforces for a JSON reply: ``value`` under ``key``, reasons first."""
    properties: dict[str, Any] = {key: value}
    if explanation_key:
        properties = {explanation_key: {"type": "string"}, **properties}
    return {
        "title": title,
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
