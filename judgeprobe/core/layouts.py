"""Pairwise item layouts: every row shape an items file may use, read onto one ``Item``.

Three layouts, told apart per row by their keys (docs/configs.md, "Items"):

- **pairwise** (judgeprobe's own, and any pairwise task): a context under one of
  ``document``, ``context``, ``question`` or ``prompt`` (text, or a conversation: a list of
  ``{role, content}`` messages), two responses ``candidate_1``/``candidate_2`` or
  ``response_1``/``response_2``, optional ``source_1``/``source_2`` (provenance labels) and an
  optional gold ``preferred`` (1, 2 or tie).
- **preference** (RewardBench, HH-RLHF style): ``prompt``, ``chosen``, ``rejected``; chosen is
  preferred. Which candidate holds ``chosen`` is drawn from a hash of the item id, so gold is
  candidate 1 in about half the items whatever the sweep's ``order`` (a judge that always picks
  one side scores chance, not 100 %).
- **MT-Bench human judgments**: ``conversation_a``/``conversation_b`` (the whole conversation
  each model had), ``winner`` (``model_a``, ``model_b``, ``tie``, ``tie (bothbad)``), ``turn``
  (the judged turn, default the last), ``model_a``/``model_b`` as provenance labels and
  ``question_id`` as the document (the resampling unit).

Where a layout gives two conversations, the messages they share are the context and the rest of
each (up to the judged turn) is its response. A conversation is rendered as ``Role: content``
paragraphs. The MT-Bench layout also keeps each whole conversation (``conversation_1``,
``conversation_2``) for a judge whose own prompt names its turns (``turn_K.user``, …). Every
problem is a ``ValueError`` whose text the caller prefixes with file and line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judgeprobe import first_error

Gold = Literal["A", "B", "Tie"]
"""A gold preference in candidate terms (``preferred`` 1, 2 or tie)."""

CONTEXT_KEYS = ("document", "context", "question", "prompt")
RESPONSE_KEYS = (("candidate_1", "candidate_2"), ("response_1", "response_2"))
_PREFERRED: dict[str, Gold] = {"1": "A", "2": "B", "tie": "Tie"}
MT_BENCH_WINNERS: dict[str, Gold] = {"model_a": "A", "model_b": "B", "tie": "Tie",
                                     "tie (bothbad)": "Tie"}  # fmt: skip
"""MT-Bench human judgments' ``winner`` in the terms of (model_a, model_b): both ties a Tie."""
_HH_TURN = "\n\nAssistant:"  # where an HH-RLHF transcript's last reply starts


class Message(BaseModel):
    """One turn of a conversation (an item's context, a rubric item's prompt)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    role: Literal["system", "user", "assistant", "developer"]
    content: str = Field(min_length=1)


def messages(value: object, name: str) -> tuple[Message, ...]:
    """``value`` as a conversation, or ValueError naming the key and the message at fault."""
    if not isinstance(value, list) or not value:
        raise ValueError(f"{name} must be a non-empty list of {{role, content}} messages")
    out = []
    for k, raw in enumerate(value):
        try:
            msg = Message.model_validate(raw)
        except ValidationError as exc:
            raise ValueError(f"{name}[{k}]: {first_error(exc)}") from None
        if not msg.content.strip():
            raise ValueError(f"{name}[{k}]: content is blank")
        out.append(msg)
    return tuple(out)


def render(conversation: Sequence[Message]) -> str:
    """A conversation as the judge reads it: one ``Role: content`` paragraph per message."""
    return "\n\n".join(f"{m.role.capitalize()}: {m.content}" for m in conversation)


def field_text(value: object) -> str:
    """An items file's field as a judge's prompt shows it.

    Text as written, a conversation rendered, anything else as JSON.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(m, dict) for m in value):
        try:
            return render(messages(value, "field"))
        except ValueError:
            pass
    return orjson.dumps(value).decode()


def _text(row: dict[str, Any], key: str) -> str:
    """A text field, or a conversation rendered as text."""
    value = row[key]
    if isinstance(value, list):
        return render(messages(value, key))
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string or a list of messages")
    return value


def mt_bench_winner(value: object) -> Gold:
    """An MT-Bench human judgment's ``winner`` as A (model_a), B (model_b) or Tie.

    The one reading of that field (items, ``logs --labels`` and ``calibrate --labels`` use
    it): ``tie`` and ``tie (bothbad)`` are both a Tie (docs/metrics.md, "Judge logs (observed,
    not intervened)"); any other value is an error naming the four.
    """
    found = MT_BENCH_WINNERS.get(str(value).strip().lower())
    if found is None:
        raise ValueError(f"winner {value!r} is not {', '.join(MT_BENCH_WINNERS)}")
    return found


def gold_of(value: object) -> Gold | None:
    """A ``preferred`` value (1, 2 or tie; empty = no gold) in candidate terms."""
    if value is None or value == "":
        return None
    word = str(value).strip().lower() if not isinstance(value, bool) else ""
    if isinstance(value, float) and value.is_integer():
        word = str(int(value))
    if word not in _PREFERRED:
        raise ValueError(f"preferred must be 1, 2 or tie, not {value!r}")
    return _PREFERRED[word]


def _one_of(row: dict[str, Any], keys: Sequence[str], what: str) -> str | None:
    given = [k for k in keys if row.get(k) is not None]
    if len(given) > 1:
        raise ValueError(f"{given[0]!r} and {given[1]!r} both given: one {what} per item")
    return given[0] if given else None


def _pairwise(row: dict[str, Any]) -> dict[str, Any]:
    context = _one_of(row, CONTEXT_KEYS, "context")
    if context is None:
        raise ValueError(f"missing the context: one of {', '.join(CONTEXT_KEYS)}")
    given = [pair for pair in RESPONSE_KEYS if any(row.get(k) is not None for k in pair)]
    if len(given) > 1:
        raise ValueError("candidate_k and response_k both given: one pair of responses per item")
    pair = given[0] if given else RESPONSE_KEYS[0]
    for key in pair:
        if row.get(key) is None:
            raise ValueError(f"missing field {key!r}")
    out = {
        "document": _text(row, context),
        "candidate_1": row[pair[0]],
        "candidate_2": row[pair[1]],
        "gold": gold_of(row.get("preferred")),
    }
    return out


def _cut(conversation: tuple[Message, ...], turn: int | None, name: str) -> tuple[Message, ...]:
    """The conversation up to its ``turn``-th assistant message (its last one when None)."""
    replies = [k for k, m in enumerate(conversation) if m.role == "assistant"]
    if not replies:
        raise ValueError(f"{name} has no assistant message to judge")
    if turn is None:
        return conversation[: replies[-1] + 1]
    if not 1 <= turn <= len(replies):
        raise ValueError(f"turn {turn}: {name} has {len(replies)} assistant message(s)")
    return conversation[: replies[turn - 1] + 1]


def _split(
    a: tuple[Message, ...], b: tuple[Message, ...], names: tuple[str, str]
) -> tuple[str, str, str]:
    """The shared start of two conversations as the context; each one's rest as its response."""
    shared = 0
    while shared < min(len(a), len(b)) and a[shared] == b[shared]:
        shared += 1
    if shared == 0:
        raise ValueError(f"{names[0]} and {names[1]} share no opening message (the context)")
    rests = (a[shared:], b[shared:])
    for rest, name in zip(rests, names, strict=True):
        if not rest:
            raise ValueError(f"{name} has no reply after the context it shares")
    texts = [rest[0].content if len(rest) == 1 else render(rest) for rest in rests]
    return render(a[:shared]), texts[0], texts[1]


def _hh_split(chosen: str, rejected: str) -> tuple[str, str, str]:
    """An HH-RLHF pair of transcripts: the shared text before each last reply is the context."""
    cuts = [text.rfind(_HH_TURN) for text in (chosen, rejected)]
    if min(cuts) <= 0 or chosen[: cuts[0]] != rejected[: cuts[1]]:
        raise ValueError("missing field 'prompt' (chosen and rejected share no transcript start)")
    start = len(_HH_TURN)
    return chosen[: cuts[0]].strip(), chosen[cuts[0] + start :], rejected[cuts[1] + start :]


def _preference(row: dict[str, Any], item_id: str) -> dict[str, Any]:
    for key in ("chosen", "rejected"):
        if row.get(key) is None:
            raise ValueError(f"missing field {key!r}")
    chosen, rejected = row["chosen"], row["rejected"]
    if isinstance(chosen, list) and isinstance(rejected, list):
        names = ("chosen", "rejected")
        context, chosen, rejected = _split(messages(chosen, names[0]),
                                           messages(rejected, names[1]), names)  # fmt: skip
        if row.get("prompt") is not None:
            context = _text(row, "prompt")
    elif row.get("prompt") is None and isinstance(chosen, str) and isinstance(rejected, str):
        context, chosen, rejected = _hh_split(chosen, rejected)
    else:
        if row.get("prompt") is None:
            raise ValueError("missing field 'prompt'")
        context = _text(row, "prompt")
        for key, value in (("chosen", chosen), ("rejected", rejected)):
            if not isinstance(value, str):
                raise ValueError(f"{key} must be a string (or both a list of messages)")
    first = hashlib.sha256(item_id.encode()).digest()[0] % 2 == 0
    return {
        "document": context,
        "candidate_1": chosen if first else rejected,
        "candidate_2": rejected if first else chosen,
        "gold": "A" if first else "B",
    }


def _mt_bench(row: dict[str, Any]) -> dict[str, Any]:
    names = ("conversation_a", "conversation_b")
    for key in (*names, "winner"):
        if row.get(key) is None:
            raise ValueError(f"missing field {key!r}")
    turn = row.get("turn")
    if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int)):
        raise ValueError(f"turn must be a whole number, not {turn!r}")
    a, b = (_cut(messages(row[k], k), turn, k) for k in names)
    context, one, two = _split(a, b, names)
    out = {"document": context, "candidate_1": one, "candidate_2": two,
           "gold": mt_bench_winner(row["winner"]),
           "conversation_1": a, "conversation_2": b}  # fmt: skip
    for k, model in ((1, "model_a"), (2, "model_b")):
        if isinstance(row.get(model), str) and not row.get(f"source_{k}"):
            out[f"source_{k}"] = row[model]
    if row.get("question_id") is not None and not row.get("document_id"):
        out["document_id"] = str(row["question_id"])
    return out


Layout = Literal["pairwise", "preference", "mt_bench"]


def layout_of(row: dict[str, Any]) -> Layout:
    """Which layout a row is in, by its keys."""
    if "chosen" in row or "rejected" in row:
        return "preference"
    if "conversation_a" in row or "conversation_b" in row:
        return "mt_bench"
    return "pairwise"


def item_fields(row: dict[str, Any], fallback_id: str) -> dict[str, Any]:
    """A row in any layout as ``Item`` fields (its other keys kept: ``Item`` takes what it knows).

    ``fallback_id`` names an item whose row gives neither ``item_id`` nor ``id``.
    """
    ident = row.get("item_id") if row.get("item_id") is not None else row.get("id")
    item_id = str(ident) if ident is not None and str(ident).strip() else fallback_id
    layout = layout_of(row)
    if layout == "preference":
        fields = _preference(row, item_id)
    elif layout == "mt_bench":
        fields = _mt_bench(row)
    else:
        fields = _pairwise(row)
    kept = {k: v for k, v in row.items() if k not in ("id", "preferred", "gold")}
    return {**kept, **fields, "item_id": item_id}
