"""Reading a judge's own reply: the rules a verdict format and a score format share.

A pattern's last match counts and every match must agree; a JSON reply holds its value under
one key and its explanation under another, or else the rest of the object is the explanation.
``protocols.own`` reads verdicts with them, ``protocols.pointwise`` scores, each through one
reply model made by ``reply_class``.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, cast

import orjson

from judgeprobe.engine.validate import ReplyError, TextReply, json_body

V = TypeVar("V")
T = TypeVar("T", bound=TextReply)


class OwnFormat(Protocol):
    """What a judge's own verdict or score format says of how its reply is read."""

    @property
    def pattern(self) -> str:
        """A regular expression whose last match holds the value (free text)."""

    @property
    def json_key(self) -> str:
        """The JSON key that holds the value ("" when the reply is free text)."""

    @property
    def explanation(self) -> str:
        """The JSON key of the explanation ("": the rest of the object)."""


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


def reply_class(
    base: Callable[..., T],
    field: str,
    fmt: OwnFormat,
    value_schema: dict[str, Any],
    read: Callable[[Any], object],
    rule: dict[str, Any],
    how: str,
) -> type[T]:
    """The reply model of one own format: the value under ``field``, and the explanation.

    ``read`` turns a token into the value (ReplyError for one the format does not allow);
    ``value_schema`` is the value's JSON schema, sent to the backend when the format is JSON;
    ``rule`` (the title and the format) is hashed into every request key; ``how`` is the
    re-ask's wording. ``base`` is the reply's (abstract) class, typed as what builds a ``T``.
    """
    parent = cast("type[T]", base)
    title = str(rule["title"])
    sent = (
        object_schema(title, fmt.json_key, value_schema, fmt.explanation) if fmt.json_key else None
    )

    def from_text(cls: type[T], body: str, finish_reason: str | None) -> T:
        if fmt.json_key:
            token, explanation = keyed(body, finish_reason, fmt.json_key, fmt.explanation)
            value = read(token)
        else:
            value, explanation = last_agreeing(fmt.pattern, body, finish_reason, field, read)
        return cls(**{field: value, "explanation": explanation})

    namespace = {
        "__module__": parent.__module__,
        "__doc__": f"{parent.__doc__} Read by {title}.",
        "key_schema": sent | rule if sent else rule,
        "schema_sent": sent,
        "reask": how,
        "from_text": classmethod(from_text),
    }
    made = types.new_class("Reply", (parent,), exec_body=lambda body: body.update(namespace))
    return cast("type[T]", made)
