"""Did a rewrite keep the meaning? Embedding similarity, and no new numbers or names.

A rewrite (paraphrase or style attack) passes when its all-MiniLM-L6-v2 cosine similarity to
the original reaches the threshold and it introduces no number and no named entity that the
original lacks. Names are found by a deliberately simple rule that needs no model: a
capitalised word that does not start a sentence, or an all-caps acronym; it is new when the
original never uses that word (in any case).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from judgeprobe.text import embeddings

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NUMBER_WORDS = frozenset((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    "hundred", "thousand", "million", "billion", "trillion", "dozen", "half", "quarter", "third",
    "twice", "thrice", "percent",
))  # fmt: skip
_WORDS = re.compile(r"[A-Za-z][\w'’-]*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*)[\"'(“‘]*$")


@dataclass(frozen=True, slots=True)
class Preservation:
    """How a rewrite relates to its original."""

    similarity: float
    new_numbers: tuple[str, ...]
    new_entities: tuple[str, ...]

    def ok(self, threshold: float) -> bool:
        """Whether a rewrite kept the meaning: similar enough and nothing invented."""
        return self.similarity >= threshold and not self.new_numbers and not self.new_entities

    def problems(self, threshold: float) -> str:
        """A short description of what failed, ``""`` when nothing did."""
        parts = []
        if self.similarity < threshold:
            parts.append(f"similarity {self.similarity:.3f} < {threshold}")
        if self.new_numbers:
            parts.append("new numbers: " + ", ".join(self.new_numbers))
        if self.new_entities:
            parts.append("new names: " + ", ".join(self.new_entities))
        return "; ".join(parts)


def numbers(text: str) -> set[str]:
    """Digits (thousands separators dropped) and number words in ``text``."""
    found = {m.group().replace(",", "").rstrip(".") for m in _NUMBER.finditer(text)}
    found |= {w.lower() for w in _WORDS.findall(text) if w.lower() in _NUMBER_WORDS}
    return found


def entities(text: str) -> set[str]:
    """Capitalised words that do not start a sentence, and all-caps acronyms."""
    found = set()
    for m in _WORDS.finditer(text):
        word = m.group()
        acronym = len(word) > 1 and word.isupper()
        if acronym or (word[0].isupper() and not _SENTENCE_START.search(text[: m.start()])):
            found.add(word)
    return found


def _vocabulary(text: str) -> set[str]:
    return {w.lower() for w in _WORDS.findall(text)}


def compare(original: str, rewrite: str, similarity: float) -> Preservation:
    """The facts of one rewrite given its precomputed embedding similarity."""
    vocab = _vocabulary(original)
    return Preservation(
        similarity=round(similarity, 6),
        new_numbers=tuple(sorted(numbers(rewrite) - numbers(original))),
        new_entities=tuple(sorted(e for e in entities(rewrite) if e.lower() not in vocab)),
    )


def check(pairs: Sequence[tuple[str, str]]) -> list[Preservation]:
    """Compare each ``(original, rewrite)``; the embeddings are computed in one batch."""
    if not pairs:
        return []
    vectors = embeddings.encode([t for pair in pairs for t in pair])
    sims = np.einsum("ij,ij->i", vectors[0::2], vectors[1::2])
    return [compare(o, r, float(s)) for (o, r), s in zip(pairs, sims, strict=True)]
