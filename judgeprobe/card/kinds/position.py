"""A position row: does the judge favour the first-shown (or second-shown) candidate?"""

from __future__ import annotations

from typing import ClassVar, Literal

from judgeprobe.card.kinds.base import SettledRow, WithEvidence
from judgeprobe.card.thresholds import Thresholds
from judgeprobe.core.estimate import Estimate, shown


class PositionRow(SettledRow, WithEvidence):
    """Blind items judged in both orders (under one label scheme): first-shown excess."""

    both_ways: ClassVar[bool] = True

    kind: Literal["position"] = "position"
    """What the row measures."""
    consistency: Estimate | None = None
    """The share of items with the same verdict in both orders."""

    def kind_note(self) -> str:
        """Consistency, and documents first against second."""
        return (
            f"consistency {shown(self.consistency)}; documents {self.up} first vs {self.down} "
            "second"
        )

    def extras(self) -> str:
        """The evidence."""
        return self.evidence_note()

    def limit(self, t: Thresholds) -> float | None:
        """``position_effect``."""
        return t.position_effect
