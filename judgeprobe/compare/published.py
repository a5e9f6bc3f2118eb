"""compare.json: the comparison of runs as a typed document with its own JSON Schema.

Its own document, not a card: ``SCHEMA_VERSION`` starts at 1 and moves only when a field's
meaning does. ``docs/compare.schema.json`` is generated from these models
(``python -m judgeprobe.compare.published``); a test holds it current.
"""

from __future__ import annotations

import sys
from typing import Literal

from pydantic import BaseModel, ConfigDict

from judgeprobe.core import files

SCHEMA_VERSION = 1
Verdict = Literal["better", "worse", "no detectable difference"]
"""A compared row's verdict on the later run against the first (docs/metrics.md)."""
CSV_COLUMNS = ["judge", "protocol", "row", "effect_1", "effect_2", "diff", "diff_lo", "diff_hi",
               "p", "q", "mdd", "verdict"]  # fmt: skip
"""compare.csv's columns, in order."""

_FROZEN = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class ComparedRow(BaseModel):
    """One row in both runs: each run's effect on the shared documents and their difference."""

    model_config = _FROZEN

    judge: str
    """The judge; ``J₁ vs J₂`` when the rows were matched by name across two judges."""
    protocol: str
    """The protocol; ``p₁ vs p₂`` likewise."""
    row: str
    """The card row's name (or ``agreement with people``, ``accuracy against people``)."""
    kind: str
    """The card row's kind (``human`` for the rows against human labels)."""
    effect_name: str
    """What the effect is, in the card's words."""
    effect_1: float | None
    """The effect in the first run over the shared documents."""
    effect_2: float | None
    """The effect in the compared run over the same documents."""
    diff: float | None
    """effect_1 − effect_2."""
    diff_lo: float | None
    """The lower end of diff's 95% paired interval over documents."""
    diff_hi: float | None
    """Its upper end."""
    documents: int
    """The shared documents: the unit of the interval and of the test."""
    first_more: int
    """Documents whose own value of the row is larger in the first run."""
    second_more: int
    """Documents whose own value is larger in the compared run."""
    p: float | None
    """The exact two-sided sign test of first_more against second_more (None: no document
    differs)."""
    q: float | None
    """p adjusted by Benjamini–Hochberg over every row of every comparison."""
    mdd: float | None
    """The minimum detectable difference at these documents (docs/metrics.md)."""
    verdict: Verdict
    """The compared run against the first: closer to the row's ideal (better), further
    (worse), or no detectable difference."""


class Cost(BaseModel):
    """What a run spent per judgment, from its manifest's spend record."""

    model_config = _FROZEN

    judgments: int
    """The run's judgments (all of them, not only the shared)."""
    requests_per_judgment: float | None = None
    """Requests sent per judgment."""
    tokens_per_judgment: float | None = None
    """Prompt and completion tokens per judgment."""
    seconds_per_judgment: float | None = None
    """Sweep wall time per judgment."""
    usd_per_judgment: float | None = None
    """Dollars per judgment (None without a price)."""
    settled_rows: int | None = None
    """A sequential run: the card rows its design settled."""
    usd_per_settled_row: float | None = None
    """A sequential run: dollars per settled row."""
    note: str = ""
    """What is missing and why (a logs run calls no judge: no spend)."""


class Multiplier(BaseModel):
    """How many human labels one judge's verdicts are worth for the calibrated estimate."""

    model_config = _FROZEN

    judge: str
    """The judge."""
    protocol: str
    """Its protocol."""
    model: str
    """The model whose win rate is estimated."""
    labels: int
    """Human labels used (n)."""
    halfwidth: float | None
    """The calibrated (PPI++) interval's half-width with the judge and n labels."""
    equivalent_labels: float | None
    """n_eq: human labels alone whose interval would be as narrow."""
    multiplier: float | None
    """n_eq / n."""


class ComparedRun(BaseModel):
    """One run of the comparison."""

    model_config = _FROZEN

    path: str
    """The run directory as given."""
    run_id: str
    """Its manifest's run id."""
    kind: str
    """``cue`` (a live run) or ``logs`` (a judge's logs), as its manifest says."""
    items: int
    """The items it judged."""
    cost: Cost
    """Its spend per judgment."""
    multipliers: list[Multiplier]
    """Each judge's label multiplier, where the items carry human labels."""


class Comparison(BaseModel):
    """One run against the first, on the items both judged."""

    model_config = _FROZEN

    first: int
    """The first run's place in ``runs`` (0)."""
    second: int
    """The compared run's place."""
    shared_items: int
    """Items both runs judged: the only ones counted."""
    shared_documents: int
    """Their documents: the unit of every interval and test."""
    only_first: int
    """Items only the first run judged (left out)."""
    only_second: int
    """Items only the compared run judged (left out)."""
    labels: str
    """Where the human labels came from ("" without labels)."""
    rows: list[ComparedRow]
    """Every row present in both runs."""
    unmatched: list[str]
    """Rows of one run with no counterpart in the other, named."""
    not_compared: list[str]
    """Rows without a paired estimator, and why."""


class PublishedComparison(BaseModel):
    """compare.json."""

    model_config = _FROZEN

    schema_version: Literal[1]
    """This document's version."""
    judgeprobe: str
    """The judgeprobe version that wrote it."""
    runs: list[ComparedRun]
    """The runs, the first being the one every other is compared with."""
    comparisons: list[Comparison]
    """Each later run against the first."""
    fdr: float
    """The Benjamini–Hochberg level a verdict other than "no detectable difference" needs."""
    power: float
    """The power of the minimum detectable difference."""
    intervals: str
    """How the intervals were computed, in words."""


def schema_text() -> str:
    """The schema as ``docs/compare.schema.json`` holds it."""
    return files.schema_text(PublishedComparison, "compare", SCHEMA_VERSION)


if __name__ == "__main__":
    sys.stdout.write(schema_text())
