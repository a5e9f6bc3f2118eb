"""The stopping rule of a sequential design: which card rows are settled after each look.

A sequential sweep (``design = "sequential"``) judges documents in rounds, in a fixed seeded
order (``SequentialPlan.order``), and recomputes the card after each round. Looking after every
round must not break the card's promises (docs/metrics.md, "Sequential designs"), so a row is
settled by a **group-sequential** rule whose looks are fixed in advance: at ``round``, 2 ×
``round``, … documents up to the maximum. Each look k sits at information fraction t_k =
documents_k / maximum, and every test spends its error with a Hwang–Shih–DeCani spending
function (``EFFICACY``, ``CLEARING``: little at the early looks, nearly the fixed design's level
at the last), so the maximum buys almost a fixed design's power. The boundaries are computed by
the recursive numerical integration of Armitage, McPherson and Rowe, from the ``gsdesign``
package's grid primitives (a port of gsDesign's C routines).

Per tested row (cue, position, pressure, sensitivity, accuracy), at look k:

- **BIASED** (SENSITIVE for a reading row): the row's sign test over documents, as Z =
  (up − down) / √(up + down), crosses the two-sided efficacy boundary at level ``fdr`` / m, m
  the card's tests (Bonferroni: the form of the card's Benjamini–Hochberg step that a single
  boundary can carry, and what BH asks of a lone effect), and the effect is at least the
  threshold (a reading row: the repeated confidence interval's lower end reaches it). Under no
  effect every look together crosses with probability ≤ ``fdr`` / m per row, so a null judge's
  card has a BIASED row with probability ≤ ``fdr``.
- **CLEAR** (INSENSITIVE for a reading row): the effect lies below the threshold by a
  one-sided sequential test of "effect = threshold" at level (1 − ``power``) / 2
  (``clear_level``; the fixed card's promise at the threshold is CLEAR on at most 1 − power of
  cards), on both sides for a row that counts either direction. Its standard error is the
  one the card's own 95% interval implies (a score-type interval, ``card.rows.INTERVALS``),
  never below the one a ±1 document difference has at the threshold (so
  a row without any discordant document yet is not taken for a precise zero). A CLEAR row of a
  judge not shown to read becomes INSENSITIVE by the card's gate (``card.sensitivity.gate``),
  as on a fixed card.
- otherwise the row is **open**. At the last look, or when the run stops on its budget, an
  open row is UNDERPOWERED, with the documents a fixed design would need to settle it from
  the effect seen so far (``documents_needed``: the smallest n whose MDE reaches the larger of
  the threshold and the effect seen).

A settled row keeps the verdict, effect and interval of the look that settled it; its
conditions are no longer planned (``conditions_needed``). Each row's printed sequential
interval (``SettledRow.sequential``; card.csv's ``sequential``, ``sequential_lo``,
``sequential_hi``) is the repeated confidence interval at level 1 − ``alpha`` (effect ± the
two-sided efficacy boundary at that level × its standard error): it covers at its level at
whichever look stopped the row, which the card's fixed-design interval at a data-chosen look
does not promise. The rows the rule does not test (wording, repeat) ride along with Blind.

Every decision is a function of the stored judgments alone (the card's intervals are seeded), so
a resumed run, and ``judgeprobe card`` replaying the looks, takes the same decisions.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache, partial
from typing import TypeVar

import numpy as np
import polars as pl
from gsdesign import h1, hupdate
from scipy.optimize import brentq
from scipy.stats import norm

from judgeprobe.card import stats
from judgeprobe.card.record import CardRow, Estimate, SettledRow
from judgeprobe.card.rows import Card, make_card
from judgeprobe.card.sensitivity import INSENSITIVE, SENSITIVE, SENSITIVITY_ROW, gate
from judgeprobe.card.thresholds import LoadedThresholds
from judgeprobe.conditions import BLIND
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.prompts.task import DEFAULT, Task
from judgeprobe.runs.rundir import Manifest, SequentialRecord
from judgeprobe.text.lexicons import Lexicons

RESAMPLES = 1_000
"""The resamples of each look's card (where an interval resamples): fixed, so the run and a
replay agree."""
GRID = 18  # gsDesign's grid size (r): its default, accurate to about 1e-6
MAX_Z = 40.0  # a boundary that spends nothing is effectively infinite
Key = tuple[str, str, str]  # judge, protocol, row


@dataclass(frozen=True, slots=True)
class SequentialPlan:
    """The design fixed before the first request: document order, round size, maximum."""

    round: int  # documents per look
    maximum: int  # documents at most (the items file's, or ``max_documents``)
    seed: int  # of the document order

    def order(self, documents: Iterable[str]) -> list[str]:
        """The documents in judging order: a seeded hash order, the first ``maximum``."""
        ranked = sorted(
            set(documents),
            key=lambda d: hashlib.sha256(f"sequential:{self.seed}:{d}".encode()).hexdigest(),
        )
        return ranked[: self.maximum]

    @property
    def looks(self) -> tuple[int, ...]:
        """Documents judged at each look: every ``round``, and the maximum last."""
        marks = list(range(self.round, self.maximum, self.round))
        return (*marks, self.maximum) if self.maximum else ()

    def fractions(self) -> tuple[float, ...]:
        """Each look's information fraction (documents / maximum)."""
        return tuple(n / self.maximum for n in self.looks)

    def record(self) -> dict[str, int]:
        """The plan as the manifest keeps it (``SequentialRecord``; ``sequential_of`` reads it)."""
        return SequentialRecord(round=self.round, maximum=self.maximum, seed=self.seed).model_dump()


def sequential_of(manifest: Manifest | None) -> SequentialPlan | None:
    """The sequential design a run's manifest records; None for a fixed design."""
    found = manifest.sequential if manifest is not None else None
    return None if found is None else SequentialPlan(found.round, found.maximum, found.seed)


EFFICACY, CLEARING = -4.0, -2.0
"""Hwang–Shih–DeCani spending of the BIASED (and the intervals') and of the CLEAR tests:
gsDesign's defaults for an efficacy and a futility bound. γ = −4 spends little early (close to
O'Brien–Fleming at the last look, so the maximum buys the fixed design's power within a few
per cent) yet lets a strong effect stop at a fifth of it; γ = −2 spends more early, so a row
without effect settles CLEAR sooner."""


def spent(level: float, t: float, gamma: float | None) -> float:
    """The error spent by information fraction ``t``.

    Hwang–Shih–DeCani with ``gamma``, or Lan–DeMets O'Brien–Fleming (None).
    """
    if gamma is None:
        return float(2.0 * norm.sf(norm.isf(level / 2.0) / math.sqrt(t)))
    return level * (1 - math.exp(-gamma * t)) / (1 - math.exp(-gamma))


def _crossing(b: float, t: float, t_prev: float, grid: tuple[np.ndarray, ...]) -> float:
    """P(Z_k ≥ b and no earlier crossing): the continuing paths' grid at t_prev carried to t."""
    z, _, h = grid
    shift = (b * math.sqrt(t) - z * math.sqrt(t_prev)) / math.sqrt(t - t_prev)
    return float(np.sum(h * norm.sf(shift)))


@cache
def upper_bounds(
    level: float,
    fractions: tuple[float, ...],
    *,
    two_sided: bool,
    gamma: float | None = EFFICACY,
) -> tuple[float, ...]:
    """Boundaries of a sequential test of total one-sided ``level`` at the looks ``fractions``.

    Z_k is the canonical statistic (independent increments, Var = 1, Cov(Z_j, Z_k) =
    √(t_j / t_k)); the boundary at look k spends what the spending function (``spent``, with
    ``gamma``) allows by t_k beyond what the earlier looks spent, given no earlier crossing
    (``two_sided``: paths that crossed either side of a symmetric boundary stopped). The grid
    density of the continuing paths is gsDesign's recursion (``gsdesign.h1``, ``hupdate``).
    """
    bounds: list[float] = []
    grid: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    before, t_prev = 0.0, 0.0
    for t in fractions:
        target = spent(level, t, gamma) - before
        if grid is None:
            b = float(min(norm.isf(target), MAX_Z)) if target > 0 else MAX_Z
        elif target <= 0 or _crossing(MAX_Z, t, t_prev, grid) >= target:
            b = MAX_Z
        else:
            gap = partial(_gap, t=t, t_prev=t_prev, grid=grid, target=target)
            b = float(brentq(gap, -MAX_Z, MAX_Z, xtol=1e-9))
        low = -b if two_sided else -np.inf
        if grid is None:
            grid = h1(GRID, 0.0, t, low, b)
        else:
            grid = hupdate(GRID, 0.0, t, low, b, 0.0, t_prev, grid)
        before += target
        t_prev = t
        bounds.append(b)
    return tuple(bounds)


def _gap(b: float, t: float, t_prev: float, grid: tuple[np.ndarray, ...], target: float) -> float:
    return _crossing(b, t, t_prev, grid) - target


@dataclass(frozen=True, slots=True)
class RowState:
    """A row after a look: settled (with the look that settled it) or still open."""

    verdict: str | None  # BIASED, CLEAR, SENSITIVE, INSENSITIVE; None: open
    documents: int  # documents judged at the row's last look (its settlement when settled)
    effect: float | None
    lo: float | None  # the repeated confidence interval
    hi: float | None
    needed: int | None = None  # open rows: a fixed design's documents from the effect seen


@dataclass(frozen=True)
class Looked:
    """Every tested row's state after a look, and the card's test count the boundaries used."""

    states: dict[Key, RowState]
    tests: int

    def open(self) -> set[Key]:
        """The rows still open."""
        return {k for k, s in self.states.items() if s.verdict is None}

    def settled(self) -> set[Key]:
        """The rows settled."""
        return {k for k, s in self.states.items() if s.verdict is not None}


def _float(x: object) -> float | None:
    return float(x) if isinstance(x, int | float) and not math.isnan(float(x)) else None


def documents_needed(
    effect: float | None, up: int, down: int, documents: int, threshold: float,
    thresholds: LoadedThresholds, tests: int,
) -> int | None:  # fmt: skip
    """Documents a fixed design would need to settle the row, from what it shows so far.

    The smallest n whose minimum detectable effect (``stats.mde``, at the card's level and
    power for its ``tests``) reaches the larger of the threshold and the effect seen: an effect
    at least the threshold is then detected (BIASED), a smaller one ruled out (CLEAR). The
    background (discordant share without the effect) is the row's discordant documents less the
    effect. None without documents.
    """
    if documents <= 0:
        return None
    t = thresholds.values
    size = max(threshold, abs(effect or 0.0))
    background = max((up + down) / documents - abs(effect or 0.0), 0.0)

    def reached(n: int) -> bool:
        found = stats.mde(n, background, t.alpha, t.power, tests)
        return found is not None and found <= size

    hi = 1
    while not reached(hi):
        hi *= 2
        if hi > 10**9:
            return None
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if reached(mid) else (mid, hi)
    return hi


def clear_level(thresholds: LoadedThresholds) -> float:
    """The level of the sequential test that settles CLEAR (INSENSITIVE): half of 1 − power.

    The card promises CLEAR at the threshold on at most 1 − power of cards; the test spends half
    of it, leaving room for the normal approximation at the first looks' small counts (the
    fixed card, which needs its power at level α / m, stays further below the bound still).
    """
    return (1 - thresholds.values.power) / 2


def _row_state(
    row: SettledRow, k: int, plan: SequentialPlan, thresholds: LoadedThresholds,
    tests: int, *, last: bool,
) -> RowState:  # fmt: skip
    """One open row at look ``k`` (0-based): settled now, or still open."""
    t = thresholds.values
    threshold = row.limit(t)
    assert threshold is not None
    fractions = plan.fractions()
    documents = plan.looks[k]
    docs = row.documents or 0
    up, down = row.up or 0, row.down or 0
    got = row.effect or Estimate(value=None)
    effect, lo_b, hi_b = _float(got.value), _float(got.lo), _float(got.hi)
    open_ = RowState(None, documents, effect, None, None)
    if effect is None or docs == 0:
        return open_
    observed = 0.0
    if lo_b is not None and hi_b is not None:  # the standard error the 95% interval implies
        observed = (hi_b - lo_b) / (2 * float(norm.isf(0.025)))
    floor = math.sqrt(threshold * (1 - threshold) / docs)
    se = max(observed, floor)
    rci = upper_bounds(t.alpha / 2, fractions, two_sided=True)[k]
    lo, hi = max(effect - rci * se, -1.0), min(effect + rci * se, 1.0)  # every effect is in [−1, 1]
    z = (up - down) / math.sqrt(up + down) if up + down else 0.0
    efficacy = upper_bounds(t.fdr / (2 * max(tests, 1)), fractions, two_sided=True)[k]
    band = upper_bounds(clear_level(thresholds), fractions, two_sided=False, gamma=CLEARING)[k]
    either = row.both_ways
    verdict: str | None = None
    if row.reading:
        if z >= efficacy and lo >= threshold and not row.held_back():
            verdict = SENSITIVE
        elif (threshold - effect) / se >= band:
            verdict = INSENSITIVE
    else:
        size = abs(effect) if either else effect
        crossed = abs(z) >= efficacy if either else z >= efficacy
        below = (threshold - effect) / se >= band
        if either:
            below = below and (effect + threshold) / se >= band
        if crossed and size >= threshold:
            verdict = "BIASED"
        elif below:
            verdict = "CLEAR"
    needed = None
    if verdict is None and last:
        needed = documents_needed(effect, up, down, docs, threshold, thresholds, tests)
    return RowState(verdict, documents, effect, lo, hi, needed)


def look(
    card: Card, k: int, plan: SequentialPlan, before: Looked | None, *, last: bool = False
) -> Looked:
    """Every tested row's state after look ``k`` (0-based) of ``plan``, from that look's card.

    Settled rows keep their state (``before``'s); ``last``: no look follows (documents or
    budget ran out), so open rows get their documents needed.
    """
    tests = sum(r.tested for r in card.records)
    tests = max(tests, before.tests if before else 0)
    states: dict[Key, RowState] = dict(before.states) if before else {}
    for row in card.of_type(SettledRow):
        key: Key = (row.judge, row.protocol, row.row)
        if key in states and states[key].verdict is not None:
            continue
        states[key] = _row_state(row, k, plan, card.thresholds, tests, last=last)
    return Looked(states, tests)


def look_card(
    judgments: pl.DataFrame, lex: Lexicons, thresholds: LoadedThresholds, task: Task = DEFAULT
) -> Card:
    """The card a look decides on: the card of the judgments so far, its resampling fixed."""
    tidy = compute_metrics(judgments, lex, None, RESAMPLES, 0, differences=False)
    return make_card(judgments, tidy, lex, thresholds, RESAMPLES, 0, task)


def documents_of_look(plan: SequentialPlan, order: Sequence[str], k: int) -> list[str]:
    """The documents judged by look ``k``."""
    return list(order[: plan.looks[k]])


def replay(
    judgments: pl.DataFrame, plan: SequentialPlan, lex: Lexicons, thresholds: LoadedThresholds,
    task: Task = DEFAULT,
) -> tuple[Looked | None, int]:  # fmt: skip
    """The looks a sequential run took, again, from its judgments: the last state, and looks.

    Look k's card is the card of the judgments of the documents of rounds 1 … k, as the run saw
    it; the run judged documents round by round, so the rounds present are those whose documents
    are in the table. The state after the last of them is the run's final state.
    """
    judged = set(judgments["document_id"].cast(pl.String).unique().to_list())
    order = plan.order(judged)
    rounds = sum(1 for n in plan.looks if n <= len(order))
    state: Looked | None = None
    for k in range(rounds):
        docs = documents_of_look(plan, order, k)
        part = judgments.filter(pl.col("document_id").cast(pl.String).is_in(docs))
        final = k == rounds - 1
        state = look(look_card(part, lex, thresholds, task), k, plan, state, last=final)
    return state, rounds


def sequential_card(card: Card, state: Looked | None) -> Card:
    """The card with the sequential verdicts, settlement and sequential intervals of its rows.

    A settled row's verdict is its sequential one; an open tested row is UNDERPOWERED; a CLEAR
    row of a judge not shown to read is INSENSITIVE (the card's gate, applied again). Rows the
    rule does not test keep their verdicts.
    """
    states = state.states if state else {}
    rows: list[CardRow] = [
        _settled(r, states.get((r.judge, r.protocol, r.row))) if isinstance(r, SettledRow) else r
        for r in card.records
    ]
    return replace(card, records=tuple(gate(rows)))


S = TypeVar("S", bound=SettledRow)


def _settled(r: S, s: RowState | None) -> S:
    """A tested row after the looks: its sequential verdict, or UNDERPOWERED while open."""
    update: dict[str, object] = {"verdict": "UNDERPOWERED"}
    if s is not None:
        update = {
            "settled_at": s.documents if s.verdict else None,
            "documents_needed": s.needed,
            "sequential": Estimate(value=s.effect, lo=s.lo, hi=s.hi),
            "verdict": s.verdict or "UNDERPOWERED",
        }
    return r.model_copy(update=update)


def conditions_needed(
    state: Looked | None, conditions: Sequence[str], placebo: Mapping[str, str],
    degrading: Sequence[str], pressure: Mapping[str, str],
) -> dict[tuple[str, str], set[str]] | None:  # fmt: skip
    """Per (judge, protocol), the conditions an open row still needs; None: every condition.

    A cue row needs its condition, Blind and the placebo it is compared with (``placebo``: per
    cue, "" for none); a position or accuracy row Blind; a sensitivity row the degrading
    conditions; a pressure row its condition and its Reask (``pressure``). A condition no row
    of the card uses yet (its row not on the card) is needed while any row is open.
    """
    if state is None:
        return None
    uses: dict[tuple[str, str], dict[str, set[str]]] = {}
    for (judge, protocol, row), s in state.states.items():
        need: set[str]
        if row in conditions and row in pressure:
            need = {row, pressure[row]} - {""}
        elif row in conditions:
            need = {row, BLIND, placebo.get(row, "")} - {""}
        elif row == SENSITIVITY_ROW:
            need = set(degrading)
        else:  # position (any scheme), accuracy
            need = {BLIND}
        mine = uses.setdefault((judge, protocol), {})
        for c in need:
            mine.setdefault(c, set()).add("open" if s.verdict is None else "settled")
    out: dict[tuple[str, str], set[str]] = {}
    for cell, used in uses.items():
        if not any("open" in how for how in used.values()):
            out[cell] = set()
            continue
        out[cell] = {c for c in conditions if c not in used or "open" in used[c]}
    return out
