"""Parse a judge's reply into its pydantic model, or say exactly why it cannot be."""

from __future__ import annotations

import re
from abc import abstractmethod
from typing import Any, ClassVar

import orjson
from pydantic import BaseModel, ValidationError

from judgeprobe import first_error

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


class ReplyError(ValueError):
    """A reply that does not conform; the message is the stored ``invalid_reason``.

    ``truncated``: the reply was cut at ``max_tokens`` before its JSON ended. Asking again
    with the same budget would only cut it again, so the engine escalates the budget instead
    of re-asking (``judgeprobe.engine.client.converse``). ``final``: a re-ask would change
    what is audited (a judge read from its first token's log-probabilities answers as it
    answered), so the reply ends Invalid with this reason at once.
    """

    def __init__(self, reason: str, *, truncated: bool = False, final: bool = False) -> None:
        super().__init__(reason)
        self.truncated = truncated
        self.final = final


def strip_reasoning(text: str) -> str:
    """Drop a reasoning model's ``<think>`` scratchpad: JSON is never parsed out of it."""
    text = _THINK.sub("", text)
    if "</think>" in text.lower():  # an unterminated opening tag was eaten by the template
        text = text[text.lower().rindex("</think>") + len("</think>") :]
    return text.strip()


class TextReply(BaseModel):
    """A reply read by its own rule rather than validated as a JSON object of its fields.

    A judge's own verdict format (protocol ``own``) is one: a pattern in free text, or a key of
    a JSON object. ``key_schema`` is what the request key hashes (the reading rule); ``schema``
    is the constraint sent to the backend, ``None`` for free text (no ``response_format``).
    """

    key_schema: ClassVar[dict[str, Any]]
    schema_sent: ClassVar[dict[str, Any] | None] = None
    reask: ClassVar[str] = "exactly in the requested format"

    @classmethod
    @abstractmethod
    def from_text(cls, body: str, finish_reason: str | None) -> TextReply:
        """The reply read from ``body`` (its reasoning stripped); ReplyError when it cannot be."""


TopTokens = tuple[tuple[str, float], ...]
"""The first reply token's most probable candidates as returned: (token, logprob)."""


class TokenReply(TextReply):
    """A reply read from the top log-probabilities of its first token, not from its text.

    The request asks for them (``engine.wire.logprob_fields``); a reply that stops at its
    budget (one token) is what was asked for, never a truncation to escalate.
    """

    @classmethod
    @abstractmethod
    def from_logprobs(cls, top: TopTokens | None, text: str) -> TokenReply:
        """The reply read from ``top`` (None: none returned); ReplyError when it cannot be."""

    @classmethod
    def from_text(cls, body: str, finish_reason: str | None) -> TextReply:
        """Never read from text alone: the log-probabilities decide."""
        raise ReplyError("no log-probabilities in the reply", final=True)


def json_body(body: str, finish_reason: str | None) -> Any:
    """A reply's JSON value (a Markdown fence around it is dropped); ReplyError when not JSON."""
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        if finish_reason == "length":
            raise ReplyError("truncated JSON (hit max_tokens)", truncated=True) from None
        raise ReplyError(f"not JSON: {body[:80]!r}") from None


def parse_reply(
    text: str | None,
    model: type[BaseModel],
    finish_reason: str | None,
    top: TopTokens | None = None,
) -> BaseModel:
    """Validate one reply. Raises ReplyError naming the problem.

    ``top``: the first token's top log-probabilities, which a ``TokenReply`` is read from.
    """
    if issubclass(model, TokenReply):
        return model.from_logprobs(top, text or "")
    if not text or not text.strip():
        raise ReplyError("empty reply")
    body = strip_reasoning(text)
    if issubclass(model, TextReply):
        return model.from_text(body, finish_reason)
    data = json_body(body, finish_reason)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ReplyError(f"schema: {first_error(exc, 'reply')}") from None


def reask_message(reason: str, model: type[BaseModel] | None = None) -> str:
    """The follow-up turn that asks the judge to fix a non-conforming reply."""
    if model is not None and issubclass(model, TextReply):
        return f"Your reply could not be used ({reason}). Reply again, {model.reask}."
    return (
        f"Your reply could not be used ({reason}). Reply again with only the JSON object, "
        "exactly in the requested format, and nothing else."
    )
