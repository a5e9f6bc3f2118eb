"""A repeat row: the judge's own noise, Blind requests sent again (informational)."""

from __future__ import annotations

from typing import Literal

from judgeprobe.card.kinds.base import RowBase


class RepeatRow(RowBase):
    """The flip rate of Blind judgments sent again: STABLE or NOISY, no test, no exit code."""

    kind: Literal["repeat"] = "repeat"
    """What the row measures."""

    def kind_note(self) -> str:
        """Where its figure comes from."""
        return (
            "Blind sent again under fresh cache keys: the judge's own noise (informational, "
            "no test)"
        )
