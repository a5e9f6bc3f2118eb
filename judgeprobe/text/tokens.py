"""Token estimates where no tokenizer is asked: every one judgeprobe makes is defined here.

A text's tokens: 1.3 per whitespace-separated word, and never fewer than one per 8 bytes (a
text with few spaces — a URL, code, a language written without them — is not counted as a
handful of words). On the bundled corpus Gemma 3's tokenizer gives 1.16–1.39 tokens per word
(mean 1.25), so the estimate errs slightly on the long side. A judge's own tokenizer, where its
server has one, is asked through ``judgeprobe.engine.tokenizer``.

A reply's tokens: its characters over ``CHARS_PER_TOKEN``, which sizes the protocols' stage
budgets (a config may set the judge's measured value).
"""

from __future__ import annotations

import math

TOKENS_PER_WORD = 1.3
MAX_BYTES_PER_TOKEN = 8
APPROXIMATION = "1.3 tokens a word, at least one per 8 bytes"
"""The estimate in words, for messages that report an estimated count."""

#: Characters per completion token assumed when none is configured: below what the embedded
#: judges were measured at (bench/RESULTS.md), so a reply's budget errs on the generous side.
CHARS_PER_TOKEN = 3.0


def approx_tokens(text: str) -> int:
    """The estimated token count of ``text`` (see the module's docstring)."""
    by_words = math.ceil(len(text.split()) * TOKENS_PER_WORD)
    return max(by_words, math.ceil(len(text.encode()) / MAX_BYTES_PER_TOKEN))
