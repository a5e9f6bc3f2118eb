"""What every card row shares, and the parts some kinds share (a test, a sequential stop).

Each kind of row is its own model in its own module (``card.kinds``), told apart by ``kind``;
the union of them is ``card.record.CardRow``. A row reads itself where the card asks a question
whose answer depends on its kind: its note (``kind_note``, ``extras``), the LDS/TS/OLS columns
(``moves``), the threshold it is tested against (``limit``), whether it counts either way
(``both_ways``) or shows that a judge reads (``reading``).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from judgeprobe.card.thresholds import Thresholds
from judgeprobe.core.estimate import Estimate
from judgeprobe.metrics.flags import NONDISCRIMINATING_FLAG

RowVerdict = Literal[
    "CLEAR",
    "BIASED",
    "UNDERPOWERED",
    "SENSITIVE",
    "INSENSITIVE",
    "STABLE",
    "UNSTABLE",
    "NOISY",
    "OBSERVED",
    "REPLACES",
    "DOES-NOT-REPLACE",
]
"""Every verdict a row can carry (README: what each one means; OBSERVED: an informational row
read from a judge's logs, which decides nothing; REPLACES, DOES-NOT-REPLACE: the alt-test's
verdict at its ε, which decides the exit code only under thresholds that gate on it)."""

SIGN_TEST = "exact two-sided sign test over documents (McNemar's, on the discordant ones)"
"""The test of every row with a p-value: documents moving with the effect against the others."""
INTERVAL_TEST = "the 95% interval against the threshold"
"""A wording row's test: no p-value, its interval decides."""

Moves = tuple[Estimate | None, Estimate | None, Estimate | None]
"""What the card's LDS, TS and OLS columns show of a row."""


class RowBase(BaseModel):
    """One test (or one informational figure) of the card, for one judge × protocol."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    both_ways: ClassVar[bool] = False
    """Its effect counts in either direction (cue, position): tested two-sided."""
    reading: ClassVar[bool] = False
    """It shows whether the judge reads (sensitivity, accuracy: ``card.sensitivity.gate``)."""

    judge: str
    """The judge, as the sweep config names it."""
    protocol: str
    """The judging protocol (baseline, SCoT, PBP, a judge's own prompt …)."""
    row: str
    """The row's name: the cue or pressure condition, or its kind (``position`` under the
    sweep's label scheme, ``position (letters)`` under a further one)."""
    kind: str
    """What the row measures: each kind's model names its own (``card.record.CardRow``)."""
    family: str = ""
    """The cue family of a battery condition (``conditions/battery.toml``); "" otherwise."""
    n: int | None = None
    """Units: pairs (cue, pressure, repeat), items judged in both orders (position), items
    judged (sensitivity, accuracy), showings rated (wording)."""
    documents: int | None = None
    """The documents the units come from: the unit of every interval and test on the card."""
    effect_name: str = ""
    """What ``effect`` is, in the card's words (e.g. ``LDS − Placebo``)."""
    effect: Estimate | None = None
    """The quantity the verdict reads, with its 95% interval over documents."""
    threshold: float | None = None
    """The thresholds file's bound this row's verdict reads against."""
    verdict: RowVerdict | None = None
    """The row's verdict (None only while the card is being made)."""

    def kind_note(self) -> str:
        """What the row's note says of its kind's counts (the task's nouns not yet applied)."""
        return ""

    def extras(self) -> str:
        """What the note adds after the kind's counts ("; …" each; "" for nothing)."""
        return ""

    def moves(self) -> Moves | None:
        """The card's LDS, TS and OLS columns: a cue row's moves, a pressure row's revisions."""
        return None

    def csv_moves(self) -> Moves:
        """card.csv's LDS, TS and OLS columns (an accuracy row's ACC and baselines too)."""
        return self.moves() or (None, None, None)

    def passes(self) -> bool:
        """A verdict a judge that never reads would earn too (``card.sensitivity.gate``)."""
        return self.verdict == "CLEAR"

    @property
    def tested(self) -> bool:
        """Whether the row has a p-value (it joins the card's Benjamini–Hochberg family)."""
        return False


class TestedRow(RowBase):
    """A row with an exact test: its counts, p, q and minimum detectable effect."""

    __test__ = False  # not a pytest class

    test: str = SIGN_TEST
    """The row's test in words (``SIGN_TEST``; "" for an informational row)."""
    up: int | None = None
    """Documents moving with the effect: the exact sign test's count one way."""
    down: int | None = None
    """Documents moving against it: the count the other way."""
    p: float | None = None
    """The exact two-sided sign test over documents (McNemar on the discordant documents);
    None for a row without a test."""
    q: float | None = None
    """``p`` adjusted by Benjamini–Hochberg across every test on the card."""
    mde: float | None = None
    """Minimum detectable effect at ``mde_documents``, level α / (the card's tests), the
    thresholds' power (``card.stats.mde``)."""
    mde_documents: int | None = None
    """The documents the MDE is computed at (those both arms of a paired effect share)."""
    background: float | None = None
    """The share of documents that would differ with no effect, both ways together: the
    discordance the MDE must see through."""

    @property
    def tested(self) -> bool:
        """Whether the row has a p-value (it joins the card's Benjamini–Hochberg family)."""
        return self.p is not None


class SettledRow(TestedRow):
    """A row a sequential design stops (``card.sequential``): cue, position, pressure, reading."""

    settled_at: int | None = None
    """A sequential run: the documents at which the row's verdict settled."""
    documents_needed: int | None = None
    """A sequential run: for a row still open, the documents it needs to settle."""
    sequential: Estimate | None = None
    """A sequential run: the effect at the row's last look with its repeated confidence interval
    (the one that keeps its level when the row stopped early; ``card.sequential``)."""

    def limit(self, t: Thresholds) -> float | None:
        """The threshold its verdict reads against (None: the thresholds' version lacks it)."""
        raise NotImplementedError

    def held_back(self) -> bool:
        """The sequential rule may not call it SENSITIVE whatever its test (``AccuracyRow``)."""
        return False


class WithNoise(BaseModel):
    """A row shown beside the judge's noise floor (cue, pressure, wording)."""

    noise_floor: Estimate | None = None
    """The judge's own noise: the flip rate of Blind requests sent again (``repeat``)."""


class WithEvidence(BaseModel):
    """A row whose protocol may quote evidence (PBP): how much of it discriminates."""

    nondiscriminating: float | None = None
    """PBP rows: the share of criteria whose quotes cannot tell the candidates apart."""

    def evidence_note(self) -> str:
        """The note's evidence part ("" without quotes)."""
        if self.nondiscriminating is None:
            return ""
        flag = " ⚠" if self.nondiscriminating >= NONDISCRIMINATING_FLAG else ""
        return (
            f"; quotes cannot tell the candidates apart in {self.nondiscriminating:.0%} "
            f"of criteria{flag}"
        )
