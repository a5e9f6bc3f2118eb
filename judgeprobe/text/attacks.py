"""Deterministic, semantics-preserving style attacks (paper, IV-E), rule-based.

- ``verbosity``: redundant but content-preserving additions — one of the summary's own
  sentences restated, and a sentence of padding that adds no fact.
- ``confidence``: an assertive rewrite without new facts — hedges removed, a sure-sounding
  opener and closer.

Neither adds a number or a name that the text did not already have, so they stay faithful.
Neither adds any word of the explanation lexicons (cue, stereotype, acknowledgement and
attack vocabulary, ``judgeprobe/text/lexicons``): an attack that wrote "thorough" or
"clearly" into the candidate would hand the judge the very words cue-align counts, and
inflate the metric it is measured with. The added phrases are chosen free of them, and a
sentence is restated only when it holds none. LLM-written attacks (checked by embedding
similarity) belong to the data set builder.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from judgeprobe.text.lexicons import load_lexicons

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_HEDGES = re.compile(
    r"\b(?:perhaps|possibly|arguably|somewhat|probably|apparently|seemingly|it seems that|"
    r"it appears that|in some ways|to some extent)\b,?\s*",
    re.IGNORECASE,
)
RESTATE = "Put another way: "
PADDING = "To sum up, these are the main points of the document."
OPENER = "Without any doubt: "
CLOSER = "These points stand exactly as stated."


@cache
def lexicon_phrases() -> tuple[str, ...]:
    """Every phrase of the packaged lexicons (lower case), which no attack may add."""
    lex = load_lexicons(None)
    every = [*lex.cue, *lex.stereotype, *lex.acknowledgement]
    every += [w for words in lex.attack.values() for w in words]
    return tuple(sorted(set(every)))


def _has_lexicon_phrase(text: str) -> bool:
    low = text.lower()
    return any(p in low for p in lexicon_phrases())


def _closed(text: str) -> str:
    """The text ending as a sentence, so what is appended starts a new one."""
    text = text.strip()
    return text if text.endswith((".", "!", "?", '"', "”")) else f"{text}."


def verbosity(text: str) -> str:
    """Pad with a restatement of the first lexicon-free sentence and a content-free closer."""
    closed = _closed(text)
    sentences = _SENTENCE_END.split(closed)
    restated = next((s for s in sentences if not _has_lexicon_phrase(s)), "")
    restate = f" {RESTATE}{_closed(restated)}" if restated else ""
    return f"{closed}{restate} {PADDING}"


def confidence(text: str) -> str:
    """Remove hedges and frame the same content assertively."""
    plain = _HEDGES.sub("", _closed(text))
    plain = re.sub(r"\s{2,}", " ", plain)
    plain = plain[:1].upper() + plain[1:]
    return f"{OPENER}{plain} {CLOSER}"


ATTACKS: dict[str, Callable[[str], str]] = {"verbosity": verbosity, "confidence": confidence}
