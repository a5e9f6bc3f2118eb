"""The reading rows: does the judge read the texts (degraded copies, gold)?"""

from __future__ import annotations

from typing import ClassVar, Literal

from judgeprobe.card.kinds.base import Moves, SettledRow
from judgeprobe.card.thresholds import Thresholds
from judgeprobe.core.estimate import Estimate, shown


class ReadingRow(SettledRow):
    """A row that shows a judge reads: SENSITIVE, or INSENSITIVE."""

    reading: ClassVar[bool] = True

    def limit(self, t: Thresholds) -> float | None:
        """``sensitivity_effect``."""
        return t.sensitivity_effect


class SensitivityRow(ReadingRow):
    """A candidate beside its copy worse in one fact: is the intact one preferred?"""

    kind: Literal["sensitivity"] = "sensitivity"
    """What the row measures."""

    def kind_note(self) -> str:
        """Documents intact against degraded."""
        return (
            f"documents {self.up} intact vs {self.down} degraded preferred; a candidate beside "
            "its copy worse in one fact"
        )


class AccuracyRow(ReadingRow):
    """Items with gold, Blind: is gold preferred, beyond what length alone would pick?"""

    kind: Literal["accuracy"] = "accuracy"
    """What the row measures."""
    accuracy: Estimate | None = None
    """ACC, the share of Blind verdicts on items with gold that pick it (a Tie is not
    correct)."""
    accuracy_longer: Estimate | None = None
    """The content-blind baseline that always picks the longer response."""
    accuracy_shorter: Estimate | None = None
    """The baseline that always picks the shorter response."""
    beats_length: bool | None = None
    """ACC lies above both length baselines (the lower ends of ACC − baseline above 0); a judge
    that reads the length, not the content, is not SENSITIVE."""

    def kind_note(self) -> str:
        """ACC and its content-blind baselines, and documents gold against other."""
        return (
            f"Blind, items with gold: ACC {shown(self.accuracy)} (a Tie is not correct); "
            f"content-blind baselines: pick the longer {shown(self.accuracy_longer)}, pick the "
            f"shorter {shown(self.accuracy_shorter)} (characters); documents {self.up} gold vs "
            f"{self.down} other preferred"
        )

    def csv_moves(self) -> Moves:
        """ACC, ACC_longer, ACC_shorter in card.csv's LDS, TS and OLS columns."""
        return self.accuracy, self.accuracy_longer, self.accuracy_shorter

    def held_back(self) -> bool:
        """INSENSITIVE on the fixed card (gold read by length): no sequential look passes it."""
        return self.verdict == "INSENSITIVE"
