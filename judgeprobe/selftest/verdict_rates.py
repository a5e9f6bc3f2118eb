"""The card's verdicts as a test procedure: their error rates, simulated (issue 29, item 2).

Simulated judges whose truth is known judge a real sweep's plan (``cue.stream.cue_jobs`` on the
sweep's config and items, the judgments table as ``cue.judgments`` writes it); the card comes
from the functions ``judgeprobe card`` runs (``metrics.compute.compute_metrics``, then
``card.rows.make_card`` with the packaged thresholds). Only the verdicts are drawn here, per
judgment, so a card costs what the metrics and the card cost, not a server round.

The judges (``JUDGES``), each a stochastic model over candidate verdicts A, B, Tie:

- **null**: an item's verdict is its own (Tie with ``TIE``, else A or B at even odds); each
  judgment keeps it, or with ``NOISE`` draws afresh (the noise a real judge shows between two
  conditions). No cue and no order moves it; it reads: of a candidate beside its degraded copy
  it picks the intact one with ``READS``, so its sensitivity row can be SENSITIVE;
- **cue at threshold**: the null judge, whose verdict under one cue (``True``) goes to the
  cue's target with the probability that makes that row's effect exactly ``cue_effect``;
- **position at threshold**: the null judge, a share ``position_effect`` of its items sent to
  the first-shown summary in every order (the first-shown excess is exactly that share);
  **second at threshold** the same toward the second-shown summary (an excess of −that share);
- **blind** judges that never read: **first** (always the first-shown summary), **random**
  (A or B at even odds, per judgment), **tie** (always Tie), **label** (the cue's target
  whenever the judgment has one, else at random).

``verdict_rates`` measures, per design, the share of cards that break each verdict's promise
(``Rate``): the null judge's cards with any BIASED row (bound: the BH level ``fdr``), the
threshold judges' rows called CLEAR (bound: 1 − ``power``, the MDE's promise), the blind
judges' cards with a SENSITIVE row (bound 5 %) or any CLEAR row (bound 0).
"""

from __future__ import annotations

import math
import random
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import polars as pl

from judgeprobe.card.record import CueRow, PositionRow, RowBase
from judgeprobe.card.rows import Card, make_card
from judgeprobe.card.sensitivity import SENSITIVE
from judgeprobe.card.thresholds import LoadedThresholds, load_thresholds
from judgeprobe.conditions import BLIND, PLACEBO, builtin_conditions, parse_conditions
from judgeprobe.core.records import JUDGMENT_SCHEMA, Item
from judgeprobe.cue.config import SweepConfig, load_config
from judgeprobe.cue.item_selection import sweep_items
from judgeprobe.cue.judgments import judgment_rows
from judgeprobe.cue.stream import cue_jobs, protocols_for
from judgeprobe.engine.store import Store
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.selftest.synthetic import synthetic_document
from judgeprobe.text.lexicons import Lexicons, load_lexicons

TIE = 0.3  # an item's chance of being a Tie to the null judge
NOISE = 0.2  # a judgment's chance of drawing its verdict afresh
READS = 0.95  # the reading judges' chance of picking the intact text of a degraded pair
PLANTED_CUE = "True"  # the cue row the cue-at-threshold judge moves
BLIND_SENSITIVE_BOUND = 0.05
JudgeName = Literal["null", "cue at threshold", "position at threshold", "second at threshold",
                    "first", "random", "tie", "label"]  # fmt: skip
JUDGES: tuple[JudgeName, ...] = ("null", "cue at threshold", "position at threshold",
                                 "second at threshold", "first", "random", "tie",
                                 "label")  # fmt: skip
DETERMINISTIC = ("first", "tie")
"""Judges that draw nothing: every card of theirs is the same, so one is measured."""


@dataclass(frozen=True)
class Design:
    """A sweep's plan at some number of documents: what every simulated judge judges."""

    name: str
    config: SweepConfig
    items: list[Item]
    resamples: int  # the card's bootstrap resamples

    @property
    def documents(self) -> int:
        """How many documents the design judges."""
        return len({item.document_id for item in self.items})


def default_design(documents: int | None = None, resamples: int = 2_000) -> Design:
    """The default sweep (``experiments/default.toml`` spells it out).

    On its bundled sample, or on ``documents`` synthetic documents (the design at another size).
    """
    cfg = load_config(None)
    if documents is None:
        return Design("default (10 documents)", _one_judge(cfg), sweep_items(cfg), resamples)
    items = synthetic_items(documents, "default")
    return Design(f"default ({documents} documents)", _one_judge(cfg), items, resamples)


PAPER = {"conditions": [BLIND, "True", "Flip", PLACEBO, "DegradedNumber", "DegradedNegation"],
         "swap": 0.5, "repeat": 0.2,
         "order": "random", "subsets": ["eq_pair"]}  # fmt: skip
"""The design of ``experiments/paper/cue-labels.toml`` (a test holds them equal): the file is
in the repository, not in the installed package."""


def paper_design(documents: int = 1_000, resamples: int = 200) -> Design:
    """The paper's cue-label design (``PAPER``) for one judge and its Baseline protocol.

    The config carries its sensitivity conditions (DegradedNumber, DegradedNegation): without a
    sensitivity row no row can be CLEAR (the gate of version-2 thresholds).
    """
    cfg = load_config(None).model_copy(update=PAPER)
    items = synthetic_items(documents, "eq_pair")
    return Design(f"paper ({documents} documents)", _one_judge(cfg), items, resamples)


def synthetic_items(documents: int, subset: str) -> list[Item]:
    """One item per synthetic document (``selftest.synthetic``); the same for a given count.

    Candidate 1 is the LLM's and candidate 2 TradML's, as the paper's ``eq_pair`` labels them.
    """
    rng = random.Random(documents)
    items = []
    for i in range(documents):
        doc, one, two = synthetic_document(rng, i)
        items.append(Item(item_id=f"sim-{i:05d}", subset=subset, document=doc, candidate_1=one,
                          candidate_2=two, document_id=f"doc-{i:05d}", source_1="LLM",
                          source_2="TradML"))  # fmt: skip
    return items


def _one_judge(cfg: SweepConfig) -> SweepConfig:
    """The config with its first judge only: a card per judge is what is simulated."""
    return cfg.model_copy(update={"judges": cfg.judges[:1]})


def plan_table(design: Design) -> pl.DataFrame:
    """The design's judgments table with every verdict still to draw (as the sweep writes it)."""
    cfg = design.config
    conditions = {**builtin_conditions(), **parse_conditions(cfg.cues, "config cues")}
    jobs = cue_jobs(
        cfg, protocols_for(cfg), design.items, conditions, {j.name: "simulated" for j in cfg.judges}
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "empty.sqlite")
        rows = list(judgment_rows("simulated", jobs, store))
        store.close()
    return pl.DataFrame(rows, schema=JUDGMENT_SCHEMA).with_columns(
        invalid_reason=pl.lit(""), explanation=pl.lit("Summary 1 keeps the document's points.")
    )


@dataclass(frozen=True)
class Truth:
    """What a judge's verdicts are drawn from, per judgment of a plan (NumPy columns)."""

    item: np.ndarray  # the judgment's item, 0..items-1
    first: np.ndarray  # the first-shown candidate: 1 = A, 2 = B
    target: np.ndarray  # the cue's target: 0 none, 1 A, 2 B
    intact: np.ndarray  # sensitivity pairs: the intact candidate (1, 2), else 0
    planted: np.ndarray  # the judgments of ``PLANTED_CUE``

    @classmethod
    def of(cls, plan: pl.DataFrame) -> Truth:
        """The columns the judges read from the plan."""
        side = {"A": 1, "B": 2}
        item = plan["item_id"].cast(pl.Categorical).to_physical().to_numpy().astype(np.int64)
        return cls(
            item=item,
            first=np.where(plan["order"].to_numpy() == "12", 1, 2),
            target=plan["target"].replace_strict(side, default=0).to_numpy(),
            intact=plan["degraded"].replace_strict({"A": 2, "B": 1}, default=0).to_numpy(),
            planted=(plan["condition"] == PLANTED_CUE).to_numpy(),
        )


def _base(rng: np.random.Generator, n: int) -> np.ndarray:
    """Verdicts 0 (Tie), 1 (A), 2 (B): Tie with ``TIE``, else A or B at even odds."""
    return np.where(rng.random(n) < TIE, 0, rng.integers(1, 3, n))


def base_shares() -> dict[int, float]:
    """The null judge's verdict shares (0 Tie, 1 A, 2 B)."""
    return {0: TIE, 1: (1 - TIE) / 2, 2: (1 - TIE) / 2}


def cue_move_rate(effect: float, *, against_placebo: bool) -> float:
    """The share of the planted cue's judgments sent to its target for a row effect ``effect``.

    A judgment sent to the target with probability π moves its pair when its Blind twin is not
    the target, so LDS − OLS = π·P(Blind ≠ t) (OLS and the null LDS agree by symmetry), and
    LDS − LDS(Placebo) = π·P(Blind ≠ t, unmoved verdict ≠ t): both verdicts are the item's
    own with 1 − ``NOISE`` each, given the item.
    """
    shares = base_shares()
    not_t = {e: 1 - ((1 - NOISE) * (e == 1) + NOISE * shares[1]) for e in shares}
    p_not = sum(shares[e] * not_t[e] for e in shares)
    p_both = sum(shares[e] * not_t[e] ** 2 for e in shares)
    return effect / (p_both if against_placebo else p_not)


def draw_verdicts(
    judge: JudgeName, truth: Truth, rng: np.random.Generator, thresholds: LoadedThresholds,
    *, against_placebo: bool,
) -> np.ndarray:  # fmt: skip
    """One card's verdicts (0 Tie, 1 A, 2 B) from ``judge`` on the plan ``truth`` describes."""
    n, items = truth.item.size, int(truth.item.max()) + 1
    t = thresholds.values
    if judge == "first":
        return truth.first.copy()
    if judge == "tie":
        return np.zeros(n, dtype=np.int64)
    if judge in ("random", "label"):
        verdicts = rng.integers(1, 3, n)
        return np.where(truth.target > 0, truth.target, verdicts) if judge == "label" else verdicts
    own = _base(rng, items)[truth.item]
    verdicts = np.where(rng.random(n) < NOISE, _base(rng, n), own)
    reads = (truth.intact > 0) & (rng.random(n) < READS)
    verdicts = np.where(reads, truth.intact, np.where(truth.intact > 0, _base(rng, n), verdicts))
    if judge == "cue at threshold":
        move = truth.planted & (
            rng.random(n) < cue_move_rate(t.cue_effect, against_placebo=against_placebo)
        )
        verdicts = np.where(move, truth.target, verdicts)
    if judge in ("position at threshold", "second at threshold"):
        led = (rng.random(items) < t.position_effect)[truth.item]
        shown = truth.first if judge == "position at threshold" else 3 - truth.first
        verdicts = np.where(led, shown, verdicts)
    return verdicts


def cards_of(plan: pl.DataFrame, verdicts: Sequence[np.ndarray], lex: Lexicons,
             thresholds: LoadedThresholds, resamples: int, seed: int) -> list[Card]:  # fmt: skip
    """The card of each set of ``verdicts`` on the plan, as ``judgeprobe card`` makes it.

    The metrics table is computed once for all of them, each set judged by a judge of its own:
    every metric is of one judge × protocol × condition cell, so a judge's rows are what its
    own run would get (a test holds them equal). Each card is made from its judge's
    judgments and rows alone: its Benjamini–Hochberg family is its own card's tests.
    """
    names = [f"sim-{i:05d}" for i in range(len(verdicts))]
    shown = np.array(["Tie", "A", "B"])
    judged = pl.concat(
        plan.with_columns(judge=pl.lit(name), verdict=pl.Series(shown[v], dtype=pl.String))
        for name, v in zip(names, verdicts, strict=True)
    )
    tidy = compute_metrics(judged, lex, None, resamples, seed, differences=False)
    by_judge = judged.partition_by("judge", as_dict=True)
    rows = tidy.partition_by("judge", as_dict=True)
    empty = tidy.clear()
    return [
        make_card(by_judge[(name,)], rows.get((name,), empty), lex, thresholds, resamples, seed)
        for name in names
    ]


@dataclass(frozen=True)
class Rate:
    """One verdict error rate: how often cards broke a promise, against its bound."""

    design: str
    judge: str
    rate: str  # what was counted
    bound: float
    broken: int  # cards that broke the promise
    cards: int

    @property
    def share(self) -> float:
        """The measured rate."""
        return self.broken / self.cards if self.cards else math.nan

    @property
    def standard_error(self) -> float:
        """The Monte Carlo standard error of the rate (binomial, at the measured rate)."""
        return math.sqrt(self.share * (1 - self.share) / self.cards) if self.cards else math.nan

    @property
    def holds(self) -> bool:
        """Whether the measured rate is within its bound."""
        return self.share <= self.bound


Counter = tuple[str, float, Callable[[Card], bool]]
"""A rate's name, its bound, and whether one card breaks it."""


def _verdicts(card: Card, kind: type[RowBase] = RowBase, row: str | None = None) -> set[str | None]:
    """The verdicts of a card's rows (of ``kind``'s model, named ``row``)."""
    return {r.verdict for r in card.of_type(kind) if row is None or r.row == row}


def counters(judge: JudgeName, thresholds: LoadedThresholds) -> list[Counter]:
    """The promises a judge's cards are checked against."""
    t = thresholds.values

    def any_verdict(
        verdict: str, kind: type[RowBase] = RowBase, row: str | None = None
    ) -> Callable[[Card], bool]:
        return lambda card: verdict in _verdicts(card, kind, row)

    if judge == "null":
        return [("any row BIASED", t.fdr, any_verdict("BIASED"))]
    if judge == "cue at threshold":
        return [(f"{PLANTED_CUE} row CLEAR", 1 - t.power,
                 any_verdict("CLEAR", CueRow, PLANTED_CUE))]  # fmt: skip
    if judge in ("position at threshold", "second at threshold"):
        return [("position row CLEAR", 1 - t.power, any_verdict("CLEAR", PositionRow))]
    return [
        ("SENSITIVE", BLIND_SENSITIVE_BOUND, any_verdict(SENSITIVE)),
        ("any row CLEAR", 0.0, any_verdict("CLEAR")),
    ]


def verdict_rates(
    designs: Sequence[Design] | None = None,
    cards: int = 400,
    seed: int = 0,
    judges: Sequence[JudgeName] = JUDGES,
    thresholds: LoadedThresholds | None = None,
    batch: int = 50,
) -> list[Rate]:
    """Every judge's error rates on every design, from ``cards`` seeded cards each.

    The default designs are the default sweep and the paper's cue-label design at 1,000
    documents. The same ``seed`` gives the same table.
    """
    limits = thresholds or load_thresholds()
    lex = load_lexicons()

    def cards_for(design: Design, plan: pl.DataFrame, verdicts: list[np.ndarray]) -> list[Card]:
        return cards_of(plan, verdicts, lex, limits, design.resamples, seed)

    chosen = designs or (default_design(), paper_design())
    return rates_of(chosen, cards, seed, judges, limits, batch, counters, cards_for)


def rates_of(
    designs: Sequence[Design], cards: int, seed: int, judges: Sequence[JudgeName],
    limits: LoadedThresholds, batch: int,
    checks_of: Callable[[JudgeName, LoadedThresholds], list[Counter]],
    cards_for: Callable[[Design, pl.DataFrame, list[np.ndarray]], Sequence[Card]],
    *, stream: tuple[int, ...] = (),
) -> list[Rate]:  # fmt: skip
    """Every judge's rates on every design: ``cards`` cards each, drawn ``batch`` at a time.

    The cards of one batch come from ``cards_for`` (the fixed card, or the sequential run's);
    ``stream`` ends every card's random key, so that a driver's draws are its own.
    """
    out: list[Rate] = []
    for d_index, design in enumerate(designs):
        plan = plan_table(design)
        truth = Truth.of(plan)
        against_placebo = PLACEBO in design.config.conditions
        for judge in judges:
            checks = checks_of(judge, limits)
            broken = [0] * len(checks)
            j_index = JUDGES.index(judge)
            n = 1 if judge in DETERMINISTIC else cards
            for start in range(0, n, batch):
                streams = (np.random.default_rng([seed, d_index, j_index, rep, *stream])
                           for rep in range(start, min(start + batch, n)))  # fmt: skip
                verdicts = [draw_verdicts(judge, truth, rng, limits,
                                          against_placebo=against_placebo)
                            for rng in streams]  # fmt: skip
                for card in cards_for(design, plan, verdicts):
                    for i, (_, _, breaks) in enumerate(checks):
                        broken[i] += breaks(card)
            out += [Rate(design.name, judge, name, bound, k, n)
                    for (name, bound, _), k in zip(checks, broken, strict=True)]  # fmt: skip
    return out


RATES_SCHEMA: dict[str, pl.DataType] = {
    "design": pl.String(),
    "judge": pl.String(),
    "rate": pl.String(),
    "measured": pl.Float64(),
    "se": pl.Float64(),
    "bound": pl.Float64(),
    "cards": pl.Int64(),
    "holds": pl.Boolean(),
}


def rates_table(rates: Sequence[Rate]) -> pl.DataFrame:
    """The rates as a table (``RATES_SCHEMA``): measured with its standard error, and bound."""
    rows = [
        (r.design, r.judge, r.rate, r.share, r.standard_error, r.bound, r.cards, r.holds)
        for r in rates
    ]
    return pl.DataFrame(rows, schema=RATES_SCHEMA, orient="row")


def format_rates(rates: Sequence[Rate]) -> str:
    """The rates as the self-test prints them, one line each."""
    lines = [f"{'design':<24} {'judge':<22} {'rate':<18} {'measured':>8} {'± se':>7} "
             f"{'bound':>6}  cards"]  # fmt: skip
    for r in rates:
        status = "ok" if r.holds else "BROKEN"
        lines.append(
            f"{r.design:<24} {r.judge:<22} {r.rate:<18} {r.share:>8.3f} "
            f"{r.standard_error:>7.3f} {r.bound:>6.2f}  {r.cards:>5} {status}"
        )
    return "\n".join(lines)
