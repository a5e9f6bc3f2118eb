"""Cue conditions as data: the label or badge each candidate wears, and which one it favours.

A condition is of one kind (``kinds.Condition``, told apart by ``kind``), each its own small
model and module:

- ``label`` (``label.py``): a label beside each candidate, ``{source_1}``/``{source_2}`` the
  candidates' true provenance; Blind is the one with none.
- ``reveal`` (``reveal.py``): Reveal-After, a second turn that shows other labels.
- ``attack`` (``attack.py``): a style attack rewrites candidate ``attack_on``.
- ``inject`` (``inject.py``): a sentence inside a candidate or the document.
- ``degrade`` (``degrade.py``): a sensitivity control, a candidate beside a worse copy.
- ``pressure`` (``pressure.py``): turn 1 as Blind, then a push with nothing new.
- ``format`` (``format.py``): one candidate in another form, the same words.

``target`` names the candidate a cue favours: ``A``, ``B``, ``none``, or ``label:TEXT`` for
whichever candidate wears the label TEXT on that item. ``family`` names the cue family a
condition belongs to (the battery's, ``battery.toml``) and ``placebo`` its matched placebo
condition, whose effect the card subtracts. The special names (Blind, the placebos, the Blind
showings judged again) are in ``names.py``; what every kind shares (the resolved cue, the texts
it writes) in ``cue.py``; condition files are read by ``bundled.py``.
"""

from judgeprobe.conditions.attack import AttackCondition
from judgeprobe.conditions.bundled import (
    BUNDLED,
    builtin_conditions,
    family_members,
    family_of,
    is_placebo,
    parse_conditions,
    placebo_of,
)
from judgeprobe.conditions.cue import (
    ConditionBase,
    Generated,
    GeneratedKind,
    Labelled,
    ResolvedCue,
    item_generated,
    item_with_edit,
)
from judgeprobe.conditions.degrade import DegradeCondition
from judgeprobe.conditions.format import FormatCondition
from judgeprobe.conditions.inject import InjectCondition, Injection
from judgeprobe.conditions.kinds import KINDS, Condition, kind_of
from judgeprobe.conditions.label import LabelCondition
from judgeprobe.conditions.names import (
    BLIND,
    NAMED_BLIND,
    PLACEBO,
    REASK,
    REPEAT,
    WORDING,
    blind_again,
    scheme_of_condition,
    wording_condition,
    wording_index,
)
from judgeprobe.conditions.pressure import PressureCondition
from judgeprobe.conditions.reveal import RevealCondition

__all__ = [
    "BLIND",
    "BUNDLED",
    "KINDS",
    "NAMED_BLIND",
    "PLACEBO",
    "REASK",
    "REPEAT",
    "WORDING",
    "AttackCondition",
    "Condition",
    "ConditionBase",
    "DegradeCondition",
    "FormatCondition",
    "Generated",
    "GeneratedKind",
    "InjectCondition",
    "Injection",
    "LabelCondition",
    "Labelled",
    "PressureCondition",
    "ResolvedCue",
    "RevealCondition",
    "blind_again",
    "builtin_conditions",
    "family_members",
    "family_of",
    "is_placebo",
    "item_generated",
    "item_with_edit",
    "kind_of",
    "parse_conditions",
    "placebo_of",
    "scheme_of_condition",
    "wording_condition",
    "wording_index",
]
