"""A wording row: does the judge change its verdict with the wording of its prompt?"""

from __future__ import annotations

from typing import Literal

from judgeprobe.card.kinds.base import INTERVAL_TEST, RowBase, WithNoise


class WordingRow(RowBase, WithNoise):
    """Blind showings judged under K wordings: the share whose verdicts are not all equal."""

    kind: Literal["wording"] = "wording"
    """What the row measures."""
    test: str = INTERVAL_TEST
    """The row's test in words: its interval against the threshold."""
    note: str = ""
    """Fleiss' κ across the wordings and the showings rated and left out (``card.wording``)."""

    def kind_note(self) -> str:
        """Its own words."""
        return self.note

    def passes(self) -> bool:
        """STABLE is a pass a judge that never reads earns too."""
        return self.verdict in ("CLEAR", "STABLE")
