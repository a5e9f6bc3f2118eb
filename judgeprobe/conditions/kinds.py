"""The condition kinds as one tagged union, and the kind a TOML table written without one has.

A condition file names a kind by the keys it writes (``attack``, ``inject``, ``reveal_1`` or
``reveal_2``, ``degrade``, ``pressure``, ``reformat``; none of them: ``label``), so every file
written before kinds existed reads unchanged; ``kind`` may also be written out. A condition is
one kind: a table that writes the keys of two is refused with both named.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from judgeprobe.conditions.attack import AttackCondition
from judgeprobe.conditions.degrade import DegradeCondition
from judgeprobe.conditions.format import FormatCondition
from judgeprobe.conditions.inject import InjectCondition
from judgeprobe.conditions.label import LabelCondition
from judgeprobe.conditions.pressure import PressureCondition
from judgeprobe.conditions.reveal import RevealCondition

Condition = Annotated[
    LabelCondition
    | RevealCondition
    | AttackCondition
    | InjectCondition
    | DegradeCondition
    | PressureCondition
    | FormatCondition,
    Field(discriminator="kind"),
]
"""A cue condition of one kind, told apart by its ``kind``."""

KINDS: dict[str, type[Condition]] = {
    "label": LabelCondition,
    "reveal": RevealCondition,
    "attack": AttackCondition,
    "inject": InjectCondition,
    "degrade": DegradeCondition,
    "pressure": PressureCondition,
    "format": FormatCondition,
}

MARKS = {
    "attack": "attack",
    "inject": "inject",
    "reveal_1": "reveal",
    "reveal_2": "reveal",
    "degrade": "degrade",
    "pressure": "pressure",
    "reformat": "format",
}
"""The key that marks a table as of a kind (``label``: none of them)."""

CUES = ("label_1", "label_2", "attack", "inject", "reveal_1", "reveal_2")
"""The keys that show a cue, which a kind that shows none (degrade, pressure, format) refuses."""


def kind_of(table: dict[str, Any]) -> str:
    """The kind a condition's table is of: as written, else by the keys it writes.

    ValueError for a table that writes the keys of two kinds, or a cue on a kind that shows
    none.
    """
    marked = sorted({kind for key, kind in MARKS.items() if table.get(key) is not None})
    shown = [key for key in CUES if table.get(key)]
    for quiet in ("degrade", "pressure"):
        if quiet in marked and (shown or table.get("target", "none") != "none"):
            raise ValueError(f"a {quiet} condition shows no cue: no label, target, attack, "
                             "inject or reveal")  # fmt: skip
    if "degrade" in marked and "pressure" in marked:
        raise ValueError("a condition degrades or presses, not both")
    if "format" in marked and (shown or len(marked) > 1):
        raise ValueError("a format condition shows no other cue: no label, attack, inject, "
                         "reveal, degrade or pressure")  # fmt: skip
    if len(marked) > 1:
        raise ValueError(f"a condition is of one kind, not {' and '.join(marked)}: "
                         "write one condition of each")  # fmt: skip
    written = table.get("kind")
    inferred = marked[0] if marked else "label"
    if written is None:
        return inferred
    if written not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}")
    return str(written)


UNSET = {
    "label_1": "",
    "label_2": "",
    "target": "none",
    "reveal_1": None,
    "reveal_2": None,
    "attack": None,
    "attack_on": "A",
    "inject": None,
    "degrade": None,
    "pressure": None,
    "reformat": None,
    "reformat_on": "A",
}
"""Each kind's key as a table of another kind could write it, meaning nothing (the value it
had before conditions had kinds): dropped, so such a table still reads."""


def of_kind(name: str, table: dict[str, Any]) -> Condition:
    """The condition ``name`` a TOML table writes (ValueError, ValidationError if it cannot be)."""
    kind = kind_of(table)
    model = KINDS[kind]
    fields = model.model_fields
    kept = {k: v for k, v in table.items()
            if k in fields or k not in UNSET or UNSET[k] != v}  # fmt: skip
    return model.model_validate({**kept, "name": name, "kind": kind})
