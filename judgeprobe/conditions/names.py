"""The special condition names: one home for each, used by every layer that needs it.

``BLIND``, ``PLACEBO`` and ``REASK`` are declared in ``builtin.toml`` (a test holds each to its
table); the others are conditions the plan makes of Blind showings judged again.
"""

from __future__ import annotations

BLIND = "Blind"
"""No cue: the neutral baseline every probe is compared with."""

PLACEBO = "Placebo"
"""The paper's placebo badge: the placebo of every cue whose file names none."""

REASK = "Reask"
"""The pressure conditions' placebo: the same second turn without any doubt."""

REPEAT = "BlindRepeat"
"""The condition of Blind judgments sent again under fresh cache keys (``repeat``): how often
the judge changes its own verdict on the identical request is its noise floor."""


NAMED_BLIND: dict[str, str] = {
    "numbers": "BlindNumbers",
    "letters": "BlindLetters",
    "ids": "BlindIds",
}
"""The condition of Blind judged again, in both orders, under a further label scheme (``names``
as a list: ``protocols.names``): the position row of that scheme."""


def scheme_of_condition(condition: str) -> str:
    """The label scheme a ``NAMED_BLIND`` condition judges under ("" for every other)."""
    return next((s for s, c in NAMED_BLIND.items() if c == condition), "")


WORDING = "BlindWording"
"""The conditions of Blind showings judged under another wording of the prompt: wording k ≥ 1
is ``BlindWording{k}`` (``wording_condition``); wording 0, the original, is Blind itself."""


def wording_condition(wording: int) -> str:
    """The condition of Blind judgments under ``wording`` (≥ 1)."""
    return f"{WORDING}{wording}"


def blind_again(condition: str) -> bool:
    """Whether ``condition`` judges Blind showings again: a repeat, a scheme or a wording.

    None of them has a cue: each rides with Blind.
    """
    again = condition == REPEAT or condition in NAMED_BLIND.values()
    return again or condition.startswith(WORDING)


def wording_index(condition: str) -> int:
    """The wording a condition judges under: k for ``BlindWording{k}``, else 0 (the original)."""
    k = condition.removeprefix(WORDING)
    return int(k) if k != condition and k.isdigit() else 0
