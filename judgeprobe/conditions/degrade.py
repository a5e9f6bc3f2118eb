"""Kind ``degrade``: a sensitivity control, a candidate beside a copy worse in one fact.

No cue at all: one candidate beside a copy of itself that is worse in one fact
(``text.degrade``), the copy on a side drawn per item. An item whose candidates offer no such
fact, or whose copy fails the one-fact check, is not judged under it (``ResolvedCue.skip``).
"""

from __future__ import annotations

import hashlib
from typing import Literal

from judgeprobe.conditions.cue import ConditionBase, Generated, ResolvedCue, text_at
from judgeprobe.core.records import Item, Target
from judgeprobe.text.degrade import Degradation, Kind, degrade, verify


class DegradeCondition(ConditionBase):
    """The intact candidate beside its copy degraded by ``degrade`` (number, entity, …)."""

    kind: Literal["degrade"] = "degrade"
    degrade: Kind

    def degradation(self, item: Item) -> tuple[Degradation | None, str]:
        """The item's degraded copy (of candidate 1, else 2) and its check ("" = passed).

        An item with gold degrades its gold candidate first: the copy then sits beside the best
        text, not beside a wrong one. None with the reason when neither offers a fact of the kind.
        """
        texts = (item.candidate_1, item.candidate_2)
        for text in texts[::-1] if item.gold == "B" else texts:
            found = degrade(self.degrade, item.document, text, item.item_id)
            if found is not None:
                return found, verify(self.degrade, item.document, found.original, found.degraded)
        return None, f"no {self.degrade} to degrade in either candidate"

    def resolved(self, item: Item) -> ResolvedCue:
        """The intact candidate beside its degraded copy, the copy's side drawn per item."""
        found, problem = self.degradation(item)
        digest = hashlib.sha256(f"degrade:{self.degrade}:{item.item_id}".encode()).digest()
        side: Target = "A" if digest[0] % 2 == 0 else "B"
        original = found.original if found else item.candidate_1
        copy = found.degraded if found else original
        texts = (copy, original) if side == "A" else (original, copy)
        return ResolvedCue(
            label_1="", label_2="", target="none", turn1_target=None, reveal=None,
            text_1=texts[0], text_2=texts[1], document=item.document,
            degraded=side if found and not problem else "none",
            change=found.change if found else "",
            skip=problem,
        )  # fmt: skip

    def generated(self, item: Item) -> Generated | None:
        """The degraded copy beside the candidate it was made from; None when not judged."""
        cue = self.resolved(item)
        if cue.skip or cue.degraded == "none":
            return None
        found, _ = self.degradation(item)
        assert found is not None
        return Generated("degraded", cue.degraded, found.original, text_at(cue, cue.degraded))
