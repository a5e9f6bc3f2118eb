"""Kind ``attack``: a style attack rewrites one candidate (verbosity, confidence)."""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from judgeprobe.conditions.cue import Generated, Labelled, ResolvedCue, Side, source_at, with_text
from judgeprobe.core.records import Item
from judgeprobe.text.attacks import ATTACKS


class AttackCondition(Labelled):
    """Candidate ``attack_on`` rewritten by the style attack ``attack``.

    The item's prepared attack (``verbosity_1``, …) when it carries one, else the rule
    (``text.attacks``). Labels may stand beside it as in a label condition.
    """

    kind: Literal["attack"] = "attack"
    attack: Literal["verbosity", "confidence"]
    attack_on: Side = "A"

    def rewritten(self, item: Item) -> str:
        """Candidate ``attack_on`` as the attack shows it."""
        i = 0 if self.attack_on == "A" else 1
        prepared = getattr(item, f"{self.attack}_{i + 1}", None)
        return prepared or ATTACKS[self.attack](source_at(item, self.attack_on))

    def resolved(self, item: Item) -> ResolvedCue:
        """The labels, and the attacked candidate in place of the original."""
        cue = replace(super().resolved(item), attack=self.attack, attack_on=self.attack_on)
        return with_text(cue, self.attack_on, self.rewritten(item))

    def generated(self, item: Item) -> Generated:
        """The rewrite, beside the candidate it was written from."""
        shown = self.resolved(item)
        text = shown.text_1 if self.attack_on == "A" else shown.text_2
        return Generated("rewrite", self.attack_on, source_at(item, self.attack_on), text)
