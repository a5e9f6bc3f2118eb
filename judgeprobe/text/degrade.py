"""Rule-based degradations: a copy of a summary made checkably worse in exactly one fact.

The sensitivity control (docs/configs.md, "Sensitivity controls") shows a judge a
summary beside a copy that is wrong in one fact checkable against the document. A judge
that reads prefers the intact text; one that does not cannot tell them apart. Four kinds,
no model involved:

- ``number``: one number of the summary (preferably one the document states) replaced by
  a value the document never states (twice or three times it; a year moves by seven);
- ``entity``: one name of the summary replaced by another name of the same document (titles,
  months, weekdays and temperature units are no names here, nor is a possessive changed);
- ``negation``: one claim negated, ``not`` put after (or taken from after) an auxiliary verb
  that carries a verb (``will keep``, ``has been``; not ``had about``, ``is the``);
- ``drop``: the summary's key sentence (the one holding most of the document's numbers and
  names; the earliest on a tie) left out.

Which number, name or claim is changed is drawn from a hash of ``key``, so a sweep builds
the same copies every time. ``verify`` checks a copy by its own rule, independently of how
it was built: the two texts differ in one place, and that place is one fact of the kind.
Names are found as ``text.preserve`` finds them (a capitalised word that does not
start a sentence, or an acronym), so a multi-word name changes in one of its words.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, get_args

from judgeprobe.text.preserve import entities, numbers

Kind = Literal["number", "entity", "negation", "drop"]
KINDS: tuple[Kind, ...] = get_args(Kind)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
_EDGE = re.compile(r"^[^\w]+|[^\w]+$")
_MODALS = frozenset((
    "is", "are", "was", "were", "can", "will", "would", "should", "could", "must", "may",
    "might", "does", "do", "did",
))  # fmt: skip
_PERFECT = frozenset(("has", "have", "had"))  # an auxiliary only before a participle
_AUXILIARIES = _MODALS | _PERFECT
# Words after which "not" reads as no claim negated ("had not about", "is not the").
_CLOSED = frozenset((
    "a", "an", "the", "about", "around", "some", "any", "no", "its", "their", "his", "her",
    "our", "my", "your", "this", "that", "these", "those", "to", "of", "in", "on", "at", "for",
    "with", "by", "from", "as", "more", "less", "many", "much", "also", "so", "than", "there",
))  # fmt: skip
# Names that are no entity of the document's story: a swap to or from them is no fact swapped.
_NOT_NAMES = frozenset((
    "dr", "mr", "mrs", "ms", "prof", "st", "january", "february", "march", "april", "may",
    "june", "july", "august", "september", "october", "november", "december", "monday",
    "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "i", "celsius",
    "fahrenheit", "kelvin",
))  # fmt: skip
NEGATION = "not"


@dataclass(frozen=True, slots=True)
class Degradation:
    """A degraded copy of ``original`` and the one fact that changed (``before`` → ``after``)."""

    kind: Kind
    original: str
    degraded: str
    before: str  # the number, name, claim or sentence as the original has it
    after: str  # what the copy has instead ("" for a dropped sentence)

    @property
    def change(self) -> str:
        """The change in one line, for the checks table and the evidence browser."""
        return f"{self.before} → {self.after}" if self.after else f"dropped: {self.before}"


def _pick(options: list[int], key: str) -> int:
    """One of ``options``, fixed by ``key``."""
    digest = hashlib.sha256(key.encode()).digest()
    return options[int.from_bytes(digest[:8], "big") % len(options)]


def _core(token: str) -> str:
    """A token without the punctuation around it."""
    return _EDGE.sub("", token)


def _replace_core(token: str, core: str, new: str) -> str:
    start = token.index(core)
    return token[:start] + new + token[start + len(core) :]


def _number_value(core: str) -> tuple[float, int, bool] | None:
    """A number token's value, decimals and whether it uses thousands separators."""
    if not _DIGITS.fullmatch(core):
        return None
    comma = "," in core and "." not in core and all(len(g) == 3 for g in core.split(",")[1:])
    plain = core.replace(",", "") if comma else core
    if plain.count(".") > 1 or "," in plain:
        return None  # a date or list such as 1.2.3: not one number
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    return float(plain), decimals, comma


def _format(value: float, decimals: int, *, comma: bool) -> str:
    return f"{value:,.{decimals}f}" if comma else f"{value:.{decimals}f}"


def _new_number(core: str, taken: set[str]) -> str | None:
    """A value for ``core`` that neither the document nor the text states."""
    parsed = _number_value(core)
    if parsed is None:
        return None
    value, decimals, comma = parsed
    year = decimals == 0 and 1800 <= value <= 2100  # a year changes by years, not twofold
    for new in (value + 7, value - 7) if year else (value * 2, value * 3, value + 7, value + 11):
        text = _format(new, decimals, comma=comma)
        if text != core and not (numbers(text) & taken):
            return text
    return None


def _number(document: str, text: str, key: str) -> Degradation | None:
    tokens = text.split()
    stated = numbers(document)
    cores = [_core(t) for t in tokens]
    found = [
        i for i, c in enumerate(cores)
        if _number_value(c) is not None and sum(numbers(c) <= numbers(o) for o in cores) == 1
    ]  # fmt: skip
    from_document = [i for i in found if numbers(_core(tokens[i])) <= stated]
    options = from_document or found
    if not options:
        return None
    i = _pick(options, f"number:{key}")
    core = _core(tokens[i])
    new = _new_number(core, stated | numbers(text))
    if new is None:
        return None
    tokens[i] = _replace_core(tokens[i], core, new)
    return Degradation("number", text, " ".join(tokens), core, new)


def _shape(word: str) -> bool:
    """True for an acronym, False for a capitalised word: a name is swapped for its like."""
    return len(word) > 1 and word.isupper()


def _entity(document: str, text: str, key: str) -> Degradation | None:
    tokens = text.split()
    names = entities(text)
    vocab = [_core(t).lower() for t in tokens]

    def standalone(i: int) -> bool:  # not part of a multi-word name
        return all(
            not (
                0 <= j < len(tokens)
                and _core(tokens[j]) in names
                and _core(tokens[j])[:1].isupper()
            )
            for j in (i - 1, i + 1)
        )

    options = [
        i
        for i, t in enumerate(tokens)
        if _core(t) in names and vocab.count(_core(t).lower()) == 1 and standalone(i)
        and not numbers(_core(t)) and _core(t).lower() not in _NOT_NAMES
        and not _core(t).endswith(("'s", "’s"))  # a possessive would lose its 's
    ]  # fmt: skip
    from_document = [i for i in options if _core(tokens[i]) in entities(document)]
    options = from_document or options
    if not options:
        return None
    i = _pick(options, f"entity:{key}")
    old = _core(tokens[i])
    others = sorted(
        e for e in entities(document)
        if e.lower() not in vocab and _shape(e) == _shape(old) and not numbers(e) and e.isalpha()
        and e.lower() not in _NOT_NAMES
    )  # fmt: skip
    if not others:
        return None
    new = others[_pick(list(range(len(others))), f"entity-new:{key}")]
    tokens[i] = _replace_core(tokens[i], old, new)
    return Degradation("entity", text, " ".join(tokens), old, new)


def _negation(text: str, key: str) -> Degradation | None:
    tokens = text.split()
    words = [t.lower() for t in tokens]

    def carries_verb(i: int) -> bool:  # an auxiliary verb followed by the verb it carries
        after = _core(words[i + 1])
        if words[i] in _PERFECT:
            return after == "been" or after.endswith(("ed", "en", "wn"))
        return words[i] in _MODALS and after.isalpha() and after not in _CLOSED

    insert = [
        i for i in range(len(tokens) - 1)
        if words[i + 1] not in (NEGATION, "never") and carries_verb(i)
    ]  # fmt: skip
    remove = [
        i for i in range(1, len(tokens))
        if words[i] == NEGATION and words[i - 1] in _AUXILIARIES
    ]  # fmt: skip
    edits = [(i, True) for i in insert] + [(i, False) for i in remove]
    if not edits:
        return None
    i, add = edits[_pick(list(range(len(edits))), f"negation:{key}")]
    if add:
        claim = f"{tokens[i]} {tokens[i + 1]}"
        new = [*tokens[: i + 1], NEGATION, *tokens[i + 1 :]]
        return Degradation(
            "negation", text, " ".join(new), claim, f"{tokens[i]} not {tokens[i + 1]}"
        )
    claim = (
        f"{tokens[i - 1]} {tokens[i]} {tokens[i + 1]}"
        if i + 1 < len(tokens)
        else f"{tokens[i - 1]} {tokens[i]}"
    )
    new = [*tokens[:i], *tokens[i + 1 :]]
    return Degradation(
        "negation", text, " ".join(new), claim, claim.replace(f" {tokens[i]}", "", 1)
    )


def sentences(text: str) -> list[str]:
    """A text's sentences (split after ``.``, ``!`` or ``?``)."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def key_sentence(document: str, parts: list[str]) -> int:
    """The index of the sentence holding most of the document's numbers and names."""
    stated, named = numbers(document), entities(document)

    def facts(s: str) -> int:
        return len(numbers(s) & stated) + len(entities(s) & named)

    return max(range(len(parts)), key=lambda i: (facts(parts[i]), -i))


def _drop(document: str, text: str) -> Degradation | None:
    parts = sentences(text)
    if len(parts) < 2:
        return None
    i = key_sentence(document, parts)
    kept = " ".join(parts[:i] + parts[i + 1 :])
    return Degradation("drop", text, kept, parts[i], "")


@lru_cache(maxsize=8192)
def degrade(kind: Kind, document: str, text: str, key: str) -> Degradation | None:
    """A copy of ``text`` worse in one fact of ``kind``; None when the text offers none."""
    if kind == "number":
        return _number(document, text, key)
    if kind == "entity":
        return _entity(document, text, key)
    if kind == "negation":
        return _negation(text, key)
    return _drop(document, text)


def one_edit(original: str, degraded: str) -> tuple[str, list[str], list[str]] | None:
    """The single place where two texts differ, word by word: (kind of edit, old, new words).

    One word replaced in place, or one word put in or taken out; None for anything else.
    """
    a, b = original.split(), degraded.split()
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return ("replace", [a[diff[0]]], [b[diff[0]]]) if len(diff) == 1 else None
    long, short = (a, b) if len(a) > len(b) else (b, a)
    if len(long) != len(short) + 1:
        return None
    i = next((k for k, (x, y) in enumerate(zip(long, short, strict=False)) if x != y), len(short))
    if long[:i] + long[i + 1 :] != short:
        return None
    return ("delete", [long[i]], []) if long is a else ("insert", [], [long[i]])


def _verify_drop(original: str, degraded: str) -> str:
    parts, kept = sentences(original), sentences(degraded)
    if len(parts) < 2:
        return "fewer than two sentences"
    gone = [i for i in range(len(parts)) if parts[:i] + parts[i + 1 :] == kept]
    return "" if gone else "not the original with one sentence left out"


def _verify_negation(original: str, degraded: str, edit: tuple[str, list[str], list[str]]) -> str:
    if edit not in (("insert", [], [NEGATION]), ("delete", [NEGATION], [])):
        return "the one change is not a 'not' put in or taken out"
    same = numbers(original) == numbers(degraded) and entities(original) == entities(degraded)
    return "" if same else "numbers or names changed"


def _verify_number(document: str, original: str, degraded: str, before: str, after: str) -> str:
    gone, added = numbers(original) - numbers(degraded), numbers(degraded) - numbers(original)
    if not (_number_value(before) and _number_value(after) and gone and added):
        return "the changed word is not a number changed"
    if added & numbers(document):
        return f"the new number {after} is one the document states"
    return "" if entities(original) == entities(degraded) else "names changed"


def _verify_entity(document: str, original: str, degraded: str, before: str, after: str) -> str:
    if before not in entities(original) or after not in entities(document):
        return "the changed word is not a name swapped for another of the document"
    if after.lower() in {_core(w).lower() for w in original.split()} or before == after:
        return f"the new name {after} is already in the summary"
    return "" if numbers(original) == numbers(degraded) else "numbers changed"


def verify(kind: Kind, document: str, original: str, degraded: str) -> str:
    """What is wrong with ``degraded`` as a one-fact degradation of ``original``; "" if nothing.

    Checked from the two texts and the document alone: they differ in one place, that place
    is one fact of ``kind``, the copy's new fact is not the document's (a number it never
    states; a name it does state, but not one the summary already had), and nothing of
    another kind moved (numbers and names elsewhere unchanged).
    """
    if kind == "drop":
        return _verify_drop(original, degraded)
    edit = one_edit(original, degraded)
    if edit is None:
        return "the texts differ in more than one word, or not at all"
    if kind == "negation":
        return _verify_negation(original, degraded, edit)
    tag, old, new = edit
    if tag != "replace":
        return "the one change is not one word replaced"
    before, after = _core(old[0]), _core(new[0])
    if kind == "number":
        return _verify_number(document, original, degraded, before, after)
    return _verify_entity(document, original, degraded, before, after)
