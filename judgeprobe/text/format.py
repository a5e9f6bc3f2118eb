r"""Format rules: the same words in the same order, in another form (the ``Format…`` conditions).

A judge should not prefer a summary for its layout. Each rule changes only the form of a text,
deterministically (a seeded draw from ``key`` where it chooses), and never a word:

- ``spacing``: line breaks, blank lines, spacing and indentation — one sentence a line, a
  blank line after every second sentence, an indent on every other line, and a double space
  in some gaps between words;
- ``bullets``: prose to bullet points, one sentence a bullet (``- ``); a text already set as
  bullets is left as it is;
- ``emphasis``: markdown bold (``**word**``) on some words of four letters or more (about one
  in four, at least one), never inside emphasis the text already has.

``same_words`` is the check each reformatted text passes (``conditions.checks``): its words
(``\w+`` runs, Unicode-aware: markdown marks, bullets and white space are no words) are the
original's, in the same order. ``plain`` undoes every rule's marks, for a reader (the
simulated judge) that must recognise a summary under any of its forms.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Literal, get_args

Form = Literal["spacing", "bullets", "emphasis"]
FORMS: tuple[Form, ...] = get_args(Form)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\w+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_CORE = re.compile(r"\w(?:[\w'’-]*\w)?")
_BOLD = "**"
EMPHASIS_MIN_LETTERS = 4
EMPHASIS_SHARE = 0.25


def _draw(key: str, *parts: object) -> float:
    """A uniform number in [0, 1) fixed by ``key`` and ``parts``."""
    raw = "\x1f".join([key, *map(str, parts)]).encode()
    return int.from_bytes(hashlib.sha256(raw).digest()[:8], "big") / 2**64


def _sentences(text: str) -> list[str]:
    """The text's sentences, white space inside each collapsed to single spaces."""
    return [" ".join(s.split()) for s in _SENTENCE_END.split(" ".join(text.split())) if s]


def spacing(text: str, key: str) -> str:
    """One sentence a line, a blank line after every second, indents and double spaces."""
    parts = _sentences(text)
    indent = " " * (2 if _draw(key, "indent") < 0.5 else 4)
    lines: list[str] = []
    for i, sentence in enumerate(parts):
        words = sentence.split(" ")
        gaps = ["  " if _draw(key, "gap", i, g) < 0.25 else " " for g in range(len(words) - 1)]
        line = words[0] + "".join(gap + word for gap, word in zip(gaps, words[1:], strict=True))
        lines.append((indent if i % 2 == 0 else "") + line)
        if i % 2 == 1 and i + 1 < len(parts):
            lines.append("")
    return "\n".join(lines)


def bulleted(text: str) -> bool:
    """Whether every non-empty line of the text already starts with a bullet or a number."""
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and all(_BULLET.match(line) for line in lines)


def bullets(text: str, key: str) -> str:
    """Prose to bullet points, one sentence a bullet; a bulleted text is left as it is."""
    del key  # no choice to draw: the rule is the same for every text
    if bulleted(text):
        return text
    return "\n".join(f"- {sentence}" for sentence in _sentences(text))


def emphasis(text: str, key: str) -> str:
    """Bold about a quarter of the longer words (at least one), outside existing emphasis."""
    tokens = re.split(r"(\s+)", text)
    candidates: list[int] = []
    inside = False
    for i, token in enumerate(tokens):
        if i % 2 == 1 or not token:
            continue
        marked = "*" in token or "_" in token
        core = _CORE.search(token)
        if not inside and not marked and core and len(core.group()) >= EMPHASIS_MIN_LETTERS:
            candidates.append(i)
        if token.count(_BOLD) % 2 == 1:
            inside = not inside
    if not candidates:
        return text
    chosen = {i for n, i in enumerate(candidates) if _draw(key, "bold", n) < EMPHASIS_SHARE}
    chosen = chosen or {candidates[int(_draw(key, "one") * len(candidates))]}
    for i in chosen:
        core = _CORE.search(tokens[i])
        assert core is not None
        a, b = core.span()
        tokens[i] = f"{tokens[i][:a]}{_BOLD}{core.group()}{_BOLD}{tokens[i][b:]}"
    return "".join(tokens)


RULES: dict[Form, Callable[[str, str], str]] = {
    "spacing": spacing,
    "bullets": bullets,
    "emphasis": emphasis,
}


def reformat(form: Form, text: str, key: str) -> str:
    """``text`` in ``form``; ``key`` seeds the rule's draws (the same key, the same text)."""
    return RULES[form](text, key)


def words(text: str) -> list[str]:
    r"""The text's words: ``\w+`` runs, so marks, bullets and white space are none."""
    return _WORD.findall(text)


def same_words(original: str, formatted: str) -> str:
    """Empty when ``formatted`` has the original's words in the same order, else what differs."""
    a, b = words(original), words(formatted)
    if a == b:
        return ""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"word {i + 1} changed: {x!r} → {y!r}"
    if len(a) > len(b):
        return f"{len(a) - len(b)} word(s) lost at the end, from {a[len(b)]!r}"
    return f"{len(b) - len(a)} word(s) added at the end, from {b[len(a)]!r}"


def plain(text: str) -> str:
    """The text with every rule's marks undone: bold marks, line bullets, white space runs.

    A text none of the rules touched keeps its words and single spaces, so ``plain`` of a
    reformatted text and of its original agree wherever the original had no such marks.
    """
    lines = [_BULLET.sub("", line) if line.lstrip().startswith("- ") else line
             for line in text.replace(_BOLD, "").splitlines()]  # fmt: skip
    return " ".join(" ".join(lines).split())


def formatted(text: str) -> bool:
    """Whether a text carries a rule's mark: bold, a bullet line, a line break or a double space."""
    inner = text.strip()
    return (
        _BOLD in text or "\n" in inner or "  " in inner or text != inner
        or any(line.startswith("- ") for line in text.splitlines())
    )  # fmt: skip
