"""The observed rows of a judge-logs run (``card.observed``): associations, nothing intervened."""

from __future__ import annotations

from typing import Literal

from judgeprobe.card.kinds.base import TestedRow
from judgeprobe.core.estimate import Estimate


class ObservedBase(TestedRow):
    """An observed figure read from a judge's logs, in its own words."""

    note: str = ""
    """What its effect is measured against and the counts behind it (``card.observed.note``)."""

    def kind_note(self) -> str:
        """Its own words."""
        return self.note


class ObservedPositionRow(ObservedBase):
    """Items a log holds in both orders: the position row's figures, observed."""

    kind: Literal["observed-position"] = "observed-position"
    """What the row measures."""
    consistency: Estimate | None = None
    """The share of items with the same verdict in both orders."""


class RandomizedPositionRow(ObservedBase):
    """Position where the log's tool itself shuffled the shown order, recovered: an experiment.

    AlpacaEval's weighted and ``_fn`` annotators: the first-shown share of decisive verdicts
    − ½, rather than an association (docs/metrics.md, "Randomized shown order, recovered
    (AlpacaEval)").
    """

    kind: Literal["observed-position-randomized"] = "observed-position-randomized"
    """What the row measures."""
    first_shown: int
    """Decisive verdicts with a recovered order that chose the first-shown response."""
    switched: int
    """Rows of the log whose second-listed output was shown first."""
    kept: int
    """Rows shown in the order the log lists them."""
    undetermined: int
    """Rows whose shown order could not be told: no position claim is made on them."""


class ObservedRow(ObservedBase):
    """Any other observed figure: its effect, test and note."""

    kind: Literal[
        "observed-length",
        "observed-self-preference",
        "observed-agreement",
        "observed-unreadable",
        "observed-drift",
    ]
    """What the row measures: the judge's length and self-preference, agreement with people,
    unreadable replies and drift over time, in its own traffic."""
