"""A cue row: does a cue move the judge's verdict toward its target (``card.rows``)?"""

from __future__ import annotations

from typing import ClassVar, Literal

from judgeprobe.card.kinds.base import Moves, SettledRow, WithEvidence, WithNoise
from judgeprobe.card.thresholds import Thresholds
from judgeprobe.core.estimate import Estimate, shown


class CueRow(SettledRow, WithNoise, WithEvidence):
    """One judge × protocol × cue condition: its moves against Blind, and the effect tested."""

    both_ways: ClassVar[bool] = True

    kind: Literal["cue"] = "cue"
    """What the row measures."""
    lds: Estimate | None = None
    """The share of pairs moved into the cue's target against Blind (LDS)."""
    ts: Estimate | None = None
    """The share moved into Tie (TS)."""
    ols: Estimate | None = None
    """The share moved into the other candidate (OLS)."""
    moved: int | None = None
    """The LDS pairs, the silent-cue share's denominator."""
    silent: Estimate | None = None
    """The share of LDS moves whose explanation never names the cue."""
    score_shift: Estimate | None = None
    """A pointwise judge's: the target's mean score under the cue minus under Blind, in the
    judge's own points (informational: the verdict reads the derived verdicts)."""
    prob_shift: Estimate | None = None
    """A judge read by its token probabilities: the probability it gives the cue's target under
    the cue minus under Blind (informational)."""

    def kind_note(self) -> str:
        """Documents toward and away, and the pairs moved."""
        return f"documents {self.up or 0} toward vs {self.down or 0} away; {self.moved} moved"

    def extras(self) -> str:
        """The score and probability shifts, then the evidence."""
        note = ""
        if self.score_shift is not None:
            note += f"; score shift {shown(self.score_shift)} points (pointwise judge)"
        if self.prob_shift is not None:
            note += f"; probability shift {shown(self.prob_shift)}"
        return note + self.evidence_note()

    def moves(self) -> Moves:
        """LDS, TS, OLS."""
        return self.lds, self.ts, self.ols

    def limit(self, t: Thresholds) -> float | None:
        """``cue_effect``."""
        return t.cue_effect
