"""Kind ``label``: a label or badge beside each candidate, nothing else changed (Blind too)."""

from __future__ import annotations

from typing import Literal

from judgeprobe.conditions.cue import Labelled


class LabelCondition(Labelled):
    """Labels beside the candidates (``True``, ``Flip``, ``Placebo``, the battery's pairs).

    With no label and target ``none`` it is Blind: the item as it is.
    """

    kind: Literal["label"] = "label"
