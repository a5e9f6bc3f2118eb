"""Extractive summaries with sumy (TextRank, LexRank, KL-Sum, SumBasic), fully offline.

sumy's own ``Tokenizer`` loads NLTK's Punkt model, which is normally downloaded at run time.
``OfflineTokenizer`` needs no data file: an untrained Punkt splitter primed with common English
abbreviations, and NLTK's rule-based word tokenizer. Stemming (Snowball) and stop words (shipped
inside sumy) need no download either.

Each summary takes the best-rated sentences, in rank order, while they fit a word budget
(at least one sentence), then shows them in document order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from nltk.tokenize import NLTKWordTokenizer
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
from sumy.nlp.stemmers import Stemmer
from sumy.parsers.plaintext import PlaintextParser
from sumy.summarizers.kl import KLSummarizer
from sumy.summarizers.lex_rank import LexRankSummarizer
from sumy.summarizers.sum_basic import SumBasicSummarizer
from sumy.summarizers.text_rank import TextRankSummarizer
from sumy.utils import get_stop_words

#: Method name → sumy summarizer class.
METHODS: dict[str, Any] = {
    "textrank": TextRankSummarizer,
    "lexrank": LexRankSummarizer,
    "klsum": KLSummarizer,
    "sumbasic": SumBasicSummarizer,
}

LANGUAGE = "english"
_ABBREVIATIONS = (
    "dr", "mr", "mrs", "ms", "prof", "st", "jr", "sr", "inc", "ltd", "co", "corp", "vs", "etc",
    "e.g", "i.e", "al", "fig", "no", "approx", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec", "u.s", "u.k", "a.m", "p.m",
)  # fmt: skip
_WORD = re.compile(r"^[^\W\d_](?:[^\W\d_]|['-])*$")


class OfflineTokenizer:
    """The two methods sumy's parser calls, with no NLTK data download."""

    language = LANGUAGE

    def __init__(self) -> None:
        params = PunktParameters()
        params.abbrev_types = set(_ABBREVIATIONS)
        self._sentences = PunktSentenceTokenizer(params)
        self._words = NLTKWordTokenizer()

    def to_sentences(self, paragraph: str) -> tuple[str, ...]:
        """Split a paragraph into sentences with Punkt, knowing the corpus's abbreviations."""
        return tuple(s.strip() for s in self._sentences.tokenize(paragraph) if s.strip())

    def to_words(self, sentence: str) -> tuple[str, ...]:
        """The word tokens of a sentence that sumy scores (punctuation dropped)."""
        return tuple(w for w in self._words.tokenize(sentence) if _WORD.match(w))


def n_words(text: str) -> int:
    """The word count every budget in the builder uses (whitespace-separated tokens)."""
    return len(text.split())


class _WithinBudget:
    """sumy's sentence-count hook: the best-rated sentences that fit ``words``."""

    def __init__(self, words: int) -> None:
        self.words = words

    def __call__(self, ranked: Sequence[Any]) -> list[Any]:
        chosen: list[Any] = []
        used = 0
        for info in ranked:
            size = n_words(str(info.sentence))
            if chosen and used + size > self.words:
                continue
            chosen.append(info)
            used += size
        return chosen


@cache
def _summarizer(method: str) -> Any:
    summarizer = METHODS[method](Stemmer(LANGUAGE))
    summarizer.stop_words = get_stop_words(LANGUAGE)
    return summarizer


def summarize(text: str, method: str, words: int) -> str:
    """An extractive summary of ``text`` by ``method``, at most ``words`` words (≥ 1 sentence)."""
    if method not in METHODS:
        raise ValueError(f"unknown extractive method {method!r}")
    parsed = PlaintextParser.from_string(text, OfflineTokenizer())
    sentences = _summarizer(method)(parsed.document, _WithinBudget(words))
    return " ".join(str(s) for s in sentences)
