"""Label schemes: what the screen calls the two candidates, and the verdicts that follow.

Position bias depends on how the candidates are named. A scheme names the two screen positions
(the first-shown summary and the second), never a candidate, so the position swap reads as
under numbers:

- ``numbers``: "Summary 1" and "Summary 2", verdicts ``[1,2]``/``[2,1]``/``Tie``: every
  built-in prompt as it was, byte for byte (the default);
- ``letters``: "Summary A" and "Summary B", verdicts ``[A,B]``/``[B,A]``/``Tie``;
- ``ids``: two random three-character IDs per item (e.g. "Summary K7R" and "Summary M3X"),
  drawn from a hash of the item, so every order, seed and condition of an item shows the same
  two IDs; verdicts ``[K7R,M3X]``/``[M3X,K7R]``/``Tie``.

The prompts follow the scheme (``prompts.load_template``'s ``names``: "Summary 1",
``summary_1`` and the verdict tokens of every template), and so do the reply schemas
(``replies.named``: the verdict enum, the ``summary_N`` keys of scores and notes); a reply is
read back into screen terms (``[1,2]``, ``summary_1``), so everything after the judge's reply
is the same under every scheme.
"""

from __future__ import annotations

import hashlib
from typing import Literal, get_args

Scheme = Literal["numbers", "letters", "ids"]
SCHEMES: tuple[Scheme, ...] = get_args(Scheme)
Names = tuple[str, str]
NUMBERS: Names = ("1", "2")
LETTERS: Names = ("A", "B")
ID_ALPHABET = "ACDEFHJKMNPRTUVWXY"  # letters that read as no digit and no word
ID_DIGITS = "3479"


def _id(digest: bytes, at: int) -> str:
    """A letter, a digit and a letter from three bytes of ``digest``."""
    a, d, b = digest[at], digest[at + 1], digest[at + 2]
    return f"{ID_ALPHABET[a % 18]}{ID_DIGITS[d % 4]}{ID_ALPHABET[b % 18]}"


def screen_names(scheme: Scheme, item_id: str) -> Names:
    """What ``scheme`` calls the first- and second-shown summary of ``item_id``."""
    if scheme == "numbers":
        return NUMBERS
    if scheme == "letters":
        return LETTERS
    digest = hashlib.sha256(f"names:ids:{item_id}".encode()).digest()
    first = _id(digest, 0)
    for at in range(3, len(digest) - 2, 3):  # a second ID unlike the first
        second = _id(digest, at)
        if second != first:
            return first, second
    return first, first[::-1] if first[::-1] != first else f"{first[0]}{first[1]}Z"


def scheme_of(names: Names) -> Scheme:
    """The scheme a pair of screen names belongs to."""
    if names == NUMBERS:
        return "numbers"
    return "letters" if names == LETTERS else "ids"
