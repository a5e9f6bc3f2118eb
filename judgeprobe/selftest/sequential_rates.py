"""The sequential design's promises, simulated (issue 38, item 2), beside the fixed card's.

The simulated judges of ``selftest.verdict_rates`` judge a design's whole plan; a sequential
run is then replayed on their verdicts look by look, as ``cue.rounds`` runs it: at look k the
card of the documents of rounds 1 … k (``card.sequential.look_card`` at ``resamples``), its
rows settled by ``card.sequential.look``, the judge's run stopped once every tested row is
settled. A settled row's conditions are not judged afterwards in a real run; its state is frozen
here, and the rows that go on read only their own cells, so the verdicts are the run's. The
requests the run would have sent are counted from the plan, round by round, under the
conditions ``cue.rounds.SequentialRounds.needed`` plans.

The promises are the fixed card's, with its bounds (``verdict_rates.counters``): a null judge's
card has a BIASED row on at most ``fdr`` of cards, a row at its threshold is CLEAR on at most 1 −
``power``, a judge that never reads is never CLEAR (and SENSITIVE on at most 5 %); and the
sequential interval printed on the planted row covers the planted effect (0 for the null
judge's True row) on at least ``COVERAGE`` of cards.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from judgeprobe.card.record import SettledRow
from judgeprobe.card.rows import Card, make_card
from judgeprobe.card.sequential import Key, Looked, SequentialPlan, look, sequential_card
from judgeprobe.card.thresholds import LoadedThresholds, load_thresholds
from judgeprobe.conditions import builtin_conditions, parse_conditions
from judgeprobe.cue.rounds import SequentialRounds, rides_with
from judgeprobe.cue.stream import protocols_for
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.selftest.verdict_rates import (
    JUDGES,
    PLANTED_CUE,
    Counter,
    Design,
    JudgeName,
    Rate,
    counters,
    rates_of,
)
from judgeprobe.text.lexicons import Lexicons, load_lexicons

COVERAGE = 0.93
"""A printed 95 % interval must cover in at least 93 % of repetitions (docs/metrics.md)."""
SHOWN = np.array(["Tie", "A", "B"])


@dataclass(frozen=True)
class Replayed:
    """One simulated judge's sequential run: its card, state, documents and requests."""

    card: Card  # the card at the run's last look, with the sequential verdicts
    state: Looked | None
    documents: int  # documents judged when the run stopped
    requests: int  # requests the rounds planned
    fixed_requests: int  # requests the fixed design plans over the same maximum


def sequential_config(design: Design, round_: int) -> Design:
    """``design`` as a sequential sweep with rounds of ``round_`` documents."""
    cfg = design.config.model_copy(update={"design": "sequential", "round": round_})
    return Design(f"{design.name}, rounds of {round_}", cfg, design.items, design.resamples)


def _rounds(design: Design) -> SequentialRounds:
    cfg = design.config
    conditions = {**builtin_conditions(), **parse_conditions(cfg.cues, "config cues")}
    return SequentialRounds(cfg, protocols_for(cfg), design.items, conditions)


def _as_config_judge(state: Looked | None, judge: str) -> Looked | None:
    """The state with its rows under the config's judge name (the plan's cells)."""
    if state is None:
        return None
    renamed: dict[Key, object] = {(judge, k[1], k[2]): s for k, s in state.states.items()}
    return Looked(renamed, state.tests)  # type: ignore[arg-type]


def _requests(plan: pl.DataFrame, stages: Mapping[str, int]) -> pl.Series:
    """Each planned judgment's requests (its protocol's stages; these designs ask one turn)."""
    return plan["protocol"].replace_strict(dict(stages), return_dtype=pl.Int64)


def _round_costs(plan: pl.DataFrame, rounds: SequentialRounds) -> tuple[pl.DataFrame, list[str]]:
    """Each planned judgment's requests with the look that judges its document; the order."""
    stages = {name: p.stages for name, p in rounds.protocols.items()}
    cost = plan.select(
        pl.col("document_id").cast(pl.String), "protocol", "condition",
        requests=_requests(plan, stages),
    )  # fmt: skip
    seq = rounds.plan
    order = seq.order(cost["document_id"].unique().to_list())
    look_of = {d: next(k for k, n in enumerate(seq.looks) if i < n) for i, d in enumerate(order)}
    cost = cost.filter(pl.col("document_id").is_in(order)).with_columns(
        look=pl.col("document_id").replace_strict(look_of, return_dtype=pl.Int64),
        base=pl.col("condition").map_elements(rides_with, return_dtype=pl.String),
    )
    return cost, order


def replay_runs(
    design: Design, plan: pl.DataFrame, verdicts: Sequence[np.ndarray], lex: Lexicons,
    thresholds: LoadedThresholds, seed: int = 0,
) -> list[Replayed]:  # fmt: skip
    """The sequential run of each set of ``verdicts`` on ``plan`` (a sequential ``design``'s).

    Each look computes the metrics of the judges still running together (every metric is of one
    judge's cell) and each judge's card from its own rows, as ``verdict_rates.cards_of`` does.
    """
    rounds = _rounds(design)
    seq: SequentialPlan = rounds.plan
    judge, protocol = design.config.judges[0].name, design.config.protocols[0]
    names = [f"sim-{i:05d}" for i in range(len(verdicts))]
    judged = pl.concat(
        plan.with_columns(judge=pl.lit(name), verdict=pl.Series(SHOWN[v], dtype=pl.String))
        for name, v in zip(names, verdicts, strict=True)
    ).with_columns(pl.col("document_id").cast(pl.String))
    cost, order = _round_costs(plan, rounds)
    fixed = int(cost["requests"].sum())
    states: dict[str, Looked | None] = dict.fromkeys(names)
    cards: dict[str, Card] = {}
    spent = dict.fromkeys(names, 0)
    stopped = dict.fromkeys(names, 0)
    running = list(names)
    for k, documents in enumerate(seq.looks):
        if not running:
            break
        part_cost = cost.filter(pl.col("look") == k)
        for name in running:  # the round each running judge's run plans
            needed = rounds.needed(_as_config_judge(states[name], judge))
            mine = part_cost
            if needed is not None and (judge, protocol) in needed:
                cells = needed[judge, protocol]
                mine = part_cost.filter(pl.col("base").is_in(sorted(cells)))
            spent[name] += int(mine["requests"].sum())
            stopped[name] = documents
        docs = order[:documents]
        part = judged.filter(pl.col("judge").is_in(running) & pl.col("document_id").is_in(docs))
        tidy = compute_metrics(part, lex, None, design.resamples, seed, differences=False)
        by_judge = part.partition_by("judge", as_dict=True)
        rows = tidy.partition_by("judge", as_dict=True)
        empty = tidy.clear()
        last = k == len(seq.looks) - 1
        still = []
        for name in running:
            card = make_card(by_judge[(name,)], rows.get((name,), empty), lex, thresholds,
                             design.resamples, seed)  # fmt: skip
            cards[name] = card
            states[name] = look(card, k, seq, states[name], last=last)
            state = states[name]
            if state is None or state.open() or not state.states:
                still.append(name)
        running = still
    return [
        Replayed(sequential_card(cards[n], states[n]), states[n], stopped[n], spent[n], fixed)
        for n in names
    ]


def _covers(row: str, truth: float) -> Counter:
    """The sequential interval of ``row`` misses ``truth`` (a card without the row: no miss)."""

    def misses(card: Card) -> bool:
        found = next((r for r in card.of_type(SettledRow) if r.row == row), None)
        got = None if found is None else found.sequential
        if got is None or got.lo is None or got.hi is None:
            return False
        return not (got.lo <= truth <= got.hi)

    return (f"{row} sequential interval misses", 1 - COVERAGE, misses)


def sequential_counters(judge: JudgeName, thresholds: LoadedThresholds) -> list[Counter]:
    """The fixed card's promises (``verdict_rates.counters``), and the planted row's coverage."""
    t = thresholds.values
    planted = {"null": (PLANTED_CUE, 0.0), "cue at threshold": (PLANTED_CUE, t.cue_effect),
               "position at threshold": ("position", t.position_effect),
               "second at threshold": ("position", -t.position_effect)}  # fmt: skip
    extra = [_covers(*planted[judge])] if judge in planted else []
    return counters(judge, thresholds) + extra


def sequential_rates(
    designs: Sequence[Design],
    cards: int = 200,
    seed: int = 0,
    judges: Sequence[JudgeName] = JUDGES,
    thresholds: LoadedThresholds | None = None,
    batch: int = 50,
) -> list[Rate]:
    """Every judge's error rates under each sequential design, from ``cards`` seeded runs each."""
    limits = thresholds or load_thresholds()
    lex = load_lexicons()

    def cards_for(design: Design, plan: pl.DataFrame, verdicts: list[np.ndarray]) -> list[Card]:
        return [run.card for run in replay_runs(design, plan, verdicts, lex, limits, seed)]

    return rates_of(
        designs, cards, seed, judges, limits, batch, sequential_counters, cards_for, stream=(38,)
    )
