"""Deterministic, semantics-preserving style attacks (paper, IV-E), rule-based.

- ``verbosity``: redundant but content-preserving additions — the summary's own first
  sentence restated, and a sentence of padding that adds no fact.
- ``confidence``: an assertive rewrite without new facts — hedges removed, a sure-sounding
  opener and closer.

Neither adds a number or a name that the text did not already have, so they stay faithful.
LLM-written attacks (checked by embedding similarity) belong to the data set builder.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_HEDGES = re.compile(
    r"\b(?:perhaps|possibly|arguably|somewhat|probably|apparently|seemingly|it seems that|"
    r"it appears that|in some ways|to some extent)\b,?\s*",
    re.IGNORECASE,
)


def _first_sentence(text: str) -> str:
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


def _closed(text: str) -> str:
    """The text ending as a sentence, so what is appended starts a new one."""
    text = text.strip()
    return text if text.endswith((".", "!", "?", '"', "”")) else f"{text}."


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def verbosity(text: str) -> str:
    """Pad with a restatement of the first sentence and a content-free closing sentence."""
    restated = _lower_first(_first_sentence(text)).rstrip(".!?")
    return (
        f"{_closed(text)} To restate the central point in other words: {restated}. "
        "Taken together, these points give a thorough and detailed account of the document."
    )


def confidence(text: str) -> str:
    """Remove hedges and frame the same content assertively."""
    plain = _HEDGES.sub("", _closed(text))
    plain = re.sub(r"\s{2,}", " ", plain)
    plain = plain[:1].upper() + plain[1:]
    return f"Clearly and without doubt: {plain} These points are stated with full certainty."


ATTACKS: dict[str, Callable[[str], str]] = {"verbosity": verbosity, "confidence": confidence}
