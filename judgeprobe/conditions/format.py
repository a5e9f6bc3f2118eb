"""Kind ``format``: one candidate shown in another form, the same words in the same order.

``reformat`` (``spacing``, ``bullets`` or ``emphasis``, ``text.format``) on candidate
``reformat_on`` (``A``, ``B``, or ``both`` for the placebo); its target is the reformatted
candidate, so it reads as an attack does (LDS/TS/OLS against Blind). The rule's draws are
seeded by the item and the candidate, so a candidate has one form in the condition and in its
placebo.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import model_validator

from judgeprobe.conditions.cue import ConditionBase, Generated, ResolvedCue, source_at
from judgeprobe.core.records import Item
from judgeprobe.text.format import Form, reformat


class FormatCondition(ConditionBase):
    """Candidate ``reformat_on`` in the form ``reformat``; it favours that candidate.

    Its target is the reformatted candidate (``A`` or ``B``); the placebo (``both``) names
    the side its condition reformats.
    """

    kind: Literal["format"] = "format"
    reformat: Form
    reformat_on: Literal["A", "B", "both"] = "A"
    target: Literal["A", "B", "none"] = "none"

    @model_validator(mode="after")
    def _target_is_the_reformatted(self) -> Self:
        if self.reformat_on != "both" and self.target != self.reformat_on:
            raise ValueError(f"a format condition's target is the candidate it reformats: "
                             f"target = {self.reformat_on!r}")  # fmt: skip
        if self.reformat_on == "both" and self.target not in ("A", "B"):
            raise ValueError("a format placebo (reformat_on = both) names its target: A or B")
        return self

    def reformatted(self, item: Item) -> tuple[str, str]:
        """Both candidates as this format condition shows them (the other one unchanged)."""
        out = [item.candidate_1, item.candidate_2]
        for i, side in enumerate(("A", "B")):
            if self.reformat_on in (side, "both"):
                key = f"format:{self.reformat}:{item.item_id}:{i + 1}"
                out[i] = reformat(self.reformat, out[i], key)
        return out[0], out[1]

    def resolved(self, item: Item) -> ResolvedCue:
        """Both candidates in their forms, no label; the target the reformatted one."""
        text_1, text_2 = self.reformatted(item)
        return ResolvedCue(
            label_1="", label_2="", target=self.target, turn1_target=None, reveal=None,
            text_1=text_1, text_2=text_2, document=item.document,
            reformat=self.reformat, reformat_on=self.reformat_on,
        )  # fmt: skip

    def generated(self, item: Item) -> Generated | None:
        """The reformatted candidate beside its original; None for the placebo (both)."""
        if self.reformat_on == "both":
            return None
        cue = self.resolved(item)
        text = cue.text_1 if self.reformat_on == "A" else cue.text_2
        return Generated("rewrite", self.reformat_on, source_at(item, self.reformat_on), text)
