"""Quote verification: is a quoted span really in the document or one of the summaries?

Quotes and sources are normalised (case, white space and punctuation dropped), then matched
exactly or, failing that, by rapidfuzz's best partial alignment. A quote whose best match is
below ``FABRICATED_BELOW`` is counted as fabricated (docs/metrics.md).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from rapidfuzz import fuzz

FABRICATED_BELOW = 0.9
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Lower-case, punctuation-free, single-spaced text, so a quote matches despite formatting."""
    kept = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text.lower())
    return _SPACE.sub(" ", kept).strip()


def _match(quote: str, source: str) -> float:
    """How well the whole quote aligns with some span of the source, 0–1."""
    if not quote:
        return 0.0
    if quote in source:
        return 1.0
    if len(quote) > len(source):  # a quote longer than its source cannot be inside it
        return fuzz.ratio(quote, source) / 100.0
    return fuzz.partial_ratio(quote, source) / 100.0


def verify_quote(quote: str, sources: Mapping[str, str]) -> dict[str, Any]:
    """Best match of ``quote`` over named sources: ``{quote, source, match, fabricated}``."""
    q = normalise(quote)
    best_name, best = "", 0.0
    for name, text in sources.items():
        s = normalise(text)
        score = _match(q, s)
        if score > best:
            best_name, best = name, score
    return {
        "quote": quote,
        "source": best_name if best >= FABRICATED_BELOW else "",
        "match": round(best, 4),
        "fabricated": best < FABRICATED_BELOW,
    }


def nondiscriminating(notes: Mapping[str, Mapping[str, Any]]) -> tuple[int, int]:
    """Criteria with quoted evidence, and those whose evidence cannot tell the candidates apart.

    ``notes`` maps each criterion to its two sides (``summary_1``/``_2`` or ``A``/``B``), each
    with verified ``quotes``. A criterion's evidence cannot discriminate when both sides quote
    the same spans (as normalised sets), or when none of its quotes was traced to either
    candidate's text (each matched the document, or nothing): docs/metrics.md beside the
    fabrication rate.
    """
    criteria = same = 0
    for sides in notes.values():
        quoted = [side.get("quotes") or [] for side in sides.values()]
        if not any(quoted):
            continue
        criteria += 1
        spans = {frozenset(normalise(str(q.get("quote", ""))) for q in qs) for qs in quoted}
        traced = any(q.get("source") not in ("document", "", None) for qs in quoted for q in qs)
        same += len(spans) == 1 or not traced
    return criteria, same
