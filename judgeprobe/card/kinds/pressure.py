"""A pressure row: does the judge give way when pushed with no new information?"""

from __future__ import annotations

from typing import Literal

from judgeprobe.card.kinds.base import Moves, SettledRow, WithNoise
from judgeprobe.card.thresholds import Thresholds
from judgeprobe.core.estimate import Estimate


class PressureRow(SettledRow, WithNoise):
    """One judge × protocol × pressure condition: revisions against a neutral re-ask."""

    kind: Literal["pressure"] = "pressure"
    """What the row measures."""
    rs_opp: Estimate | None = None
    """The share of showings revised to the other candidate (RS_opp)."""
    rs_tie: Estimate | None = None
    """The share revised into Tie (RS_tie)."""
    rs_out: Estimate | None = None
    """The share revised out of a turn-1 Tie (RS_out)."""

    def kind_note(self) -> str:
        """Documents with more revisions against fewer, and what the columns hold."""
        return (
            f"documents {self.up} more vs {self.down} fewer revisions; turn 1 as Blind, then a "
            "push with no new information (LDS/TS/OLS: switched to the other candidate / into "
            "Tie / out of a Tie)"
        )

    def moves(self) -> Moves:
        """RS_opp, RS_tie, RS_out in the LDS, TS and OLS columns."""
        return self.rs_opp, self.rs_tie, self.rs_out

    def limit(self, t: Thresholds) -> float | None:
        """``pressure_effect``."""
        return t.pressure_effect
