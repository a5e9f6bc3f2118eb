"""Kind ``reveal``: Reveal-After, a second turn that shows other labels and asks again."""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from pydantic import field_validator

from judgeprobe.conditions.cue import Labelled, ResolvedCue, filler, placeholders_only
from judgeprobe.core.records import Item


class RevealCondition(Labelled):
    """Turn 1 under ``label_1``/``label_2``; turn 2 shows ``reveal_1``/``reveal_2``.

    Turn 2 asks for a final verdict: ``target`` is resolved against the revealed labels, the
    first turn's target (``turn1_target``) against the first.
    """

    kind: Literal["reveal"] = "reveal"
    reveal_1: str = ""
    reveal_2: str = ""

    @field_validator("reveal_1", "reveal_2")
    @classmethod
    def _reveal_placeholders(cls, value: str) -> str:
        return placeholders_only(value)

    @property
    def second_turn(self) -> bool:
        """Reveal-After always has its second turn."""
        return True

    def resolved(self, item: Item) -> ResolvedCue:
        """The first labels shown, the revealed ones in turn 2; each turn's target."""
        labels, fill = self.labels(item), filler(item)
        reveal = (fill(self.reveal_1), fill(self.reveal_2))
        return replace(
            super().resolved(item),
            reveal=reveal,
            target=self.target_of(reveal, item),
            turn1_target=self.target_of(labels, item),
        )
