"""An alt-test row: can the judge replace the run's annotators (``judgeprobe alttest``)?"""

from __future__ import annotations

from typing import Literal

from judgeprobe.card.kinds.base import RowBase

REPLACES = "REPLACES"
DOES_NOT_REPLACE = "DOES-NOT-REPLACE"


class AltTestRow(RowBase):
    """The alternative annotator test at one ε: REPLACES when the winning rate ω ≥ ½.

    Its ``effect`` is ω, the share of tested annotators the judge beats; ``threshold`` is ½. It
    decides the exit code only under a thresholds file that sets ``alt_test_epsilon``
    (``card.alttest``).
    """

    kind: Literal["alt-test"] = "alt-test"
    """What the row measures."""
    test: str = ""
    """The test in words: a one-sided paired t-test per annotator left out, Benjamini–Yekutieli
    across the annotators."""
    epsilon: float
    """The margin ε the verdict reads (the annotators' penalty: the advantage the judge's cost
    buys)."""
    advantage_probability: float
    """ρ: the mean over tested annotators of the share of items on which the judge is at least
    as aligned with the others as the annotator left out (it ranks judges, whatever ε)."""
    annotators: int
    """The annotators tested (30 counted items or more)."""
    untested: int = 0
    """The annotators with too few counted items to test (still in the others' reference
    sets)."""
    gates: bool = False
    """Whether its verdict decides the card's exit code (thresholds version 5)."""
    note: str = ""
    """Its counts in words (``card.alttest``)."""

    def kind_note(self) -> str:
        """Its own words."""
        return self.note

    def passes(self) -> bool:
        """Not a verdict of reading: the reading gate leaves it alone."""
        return False
