"""Kind ``pressure``: turn 1 as Blind, then a second turn that pushes with nothing new.

``pressure`` (``challenge``, ``disagree`` or ``reask``) is what turn 2 says
(``protocols.pressure``); its target is resolved from turn 1's verdict, so it shows no cue.
"""

from __future__ import annotations

from typing import Literal

from judgeprobe.conditions.cue import ConditionBase, ResolvedCue
from judgeprobe.core.records import Item
from judgeprobe.core.records import Pressure as PressureKind


class PressureCondition(ConditionBase):
    """Blind, then the push ``pressure`` in a second turn."""

    kind: Literal["pressure"] = "pressure"
    pressure: PressureKind

    @property
    def second_turn(self) -> bool:
        """The push is a second turn."""
        return True

    def resolved(self, item: Item) -> ResolvedCue:
        """The item as Blind shows it; the push is turn 2's."""
        return ResolvedCue(
            label_1="", label_2="", target="none", turn1_target=None, reveal=None,
            text_1=item.candidate_1, text_2=item.candidate_2, document=item.document,
            pressure=self.pressure,
        )  # fmt: skip
