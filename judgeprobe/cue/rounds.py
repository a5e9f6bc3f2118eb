"""A sequential sweep: the plan that grows round by round (``design = "sequential"``).

The documents are judged in rounds of ``round``, in the seeded order of
``card.sequential.SequentialPlan``. After each round the card of the judgments so far is
looked at (``card.sequential.look``); a settled row's conditions are left out of later rounds
(``conditions_needed``), Blind and the controls go on while a row that pairs with them is open.
The sweep stops when every row is settled, the documents run out, or the next round would
pass ``budget_requests``. The engine is unchanged: each round is a plan of jobs like any
sweep's, run by the shared runner, live, on Ray, or as a batch file.

Every round's plan is a function of the stored judgments of the rounds before it, so a resumed
run walks the same rounds (the stored ones send nothing) and takes the same decisions; a batch
pass finds the first round not yet answered the same way, exports it, and a later pass
imports its answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import polars as pl
from rich.console import Console

from judgeprobe.card.sequential import (
    Looked,
    SequentialPlan,
    conditions_needed,
    look,
    look_card,
    replay,
)
from judgeprobe.card.thresholds import LoadedThresholds, load_thresholds
from judgeprobe.conditions import (
    BLIND,
    PLACEBO,
    REASK,
    Condition,
    DegradeCondition,
    PressureCondition,
    blind_again,
    is_placebo,
    placebo_of,
)
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.job import Job
from judgeprobe.cue.stream import cue_jobs
from judgeprobe.engine.batch import batch_info
from judgeprobe.engine.runner import RunSummary
from judgeprobe.metrics.load import counted_judgments
from judgeprobe.protocols import JudgeProtocol
from judgeprobe.protocols.reveal import TEMPLATES, reveal_stages
from judgeprobe.runs.batch import batch_sweep
from judgeprobe.runs.ray import ray_sweep
from judgeprobe.runs.rundir import RunDir, open_store
from judgeprobe.runs.sweep import JobType, judges_open, run_planned
from judgeprobe.text.lexicons import Lexicons, load_lexicons

Needed = dict[tuple[str, str], set[str]] | None
"""Per (judge, protocol), the conditions a round plans; None: every condition."""


def sequential_plan(cfg: SweepConfig, items: Sequence[Item]) -> SequentialPlan:
    """The design of a sequential sweep over ``items``: its round, maximum and order seed."""
    documents = len({item.document_id for item in items})
    maximum = min(cfg.max_documents, documents) if cfg.max_documents else documents
    return SequentialPlan(cfg.round, maximum, cfg.seeds[0])


def rides_with(condition: str) -> str:
    """The condition a job's rides with: Blind for its repeats, wordings and further schemes."""
    return BLIND if blind_again(condition) else condition


def requests_of(job: Job) -> int:
    """The requests a job plans before any cache: its stages, and a second turn's."""
    second = (job.reveal is not None or job.pressure is not None) and job.protocol.name in TEMPLATES
    return job.protocol.stages + (reveal_stages(job.protocol.name) if second else 0)


@dataclass
class SequentialRounds:
    """A sequential sweep's rounds: which documents each judges, and under which conditions."""

    cfg: SweepConfig
    protocols: dict[str, JudgeProtocol]
    items: list[Item]
    conditions: dict[str, Condition]
    plan: SequentialPlan = field(init=False)
    by_round: list[list[Item]] = field(init=False)

    def __post_init__(self) -> None:
        self.plan = sequential_plan(self.cfg, self.items)
        order = self.plan.order(item.document_id for item in self.items)
        rank = {doc: i for i, doc in enumerate(order)}
        looks = self.plan.looks
        self.by_round = [[] for _ in looks]
        for item in sorted(
            (i for i in self.items if i.document_id in rank), key=lambda i: rank[i.document_id]
        ):
            k = next(j for j, n in enumerate(looks) if rank[item.document_id] < n)
            self.by_round[k].append(item)

    def needed(self, state: Looked | None) -> Needed:
        """The conditions the next round plans, from the rows still open."""
        names = self.cfg.conditions
        placebo = {}
        for c in names:
            own = placebo_of(c)
            chosen = own if own in names else PLACEBO if PLACEBO in names else ""
            placebo[c] = "" if is_placebo(c) else chosen
        pushes = [c for c in names if isinstance(self.conditions[c], PressureCondition)]
        pressure = {c: (r if (r := placebo_of(c, REASK)) in names else "") for c in pushes}
        degrading = [c for c in names if isinstance(self.conditions[c], DegradeCondition)]
        return conditions_needed(state, names, placebo, degrading, pressure)

    def first_round(self) -> int:
        """The requests the first round plans (every condition), before any cache."""
        placeholder = {j.name: "" for j in self.cfg.judges}
        return sum(requests_of(j) for j in self.jobs(0, placeholder, None)) if self.by_round else 0

    def settled(self, needed: Needed) -> bool:
        """Whether nothing is left to plan: every cell's rows settled."""
        cells = {(j.name, p) for j in self.cfg.judges for p in self.protocols}
        return needed is not None and cells <= set(needed) and not any(needed.values())

    def jobs(self, k: int, fingerprints: dict[str, str], needed: Needed) -> Iterator[Job]:
        """Round ``k``'s jobs: its documents under the conditions ``needed`` per cell."""
        wanted = set(self.cfg.conditions)
        if needed is not None:
            wanted = set().union(*needed.values()) if needed else set()
            # a cell the card has no tested row for yet plans every condition
            cells = {(j.name, p) for j in self.cfg.judges for p in self.protocols}
            if cells - set(needed):
                wanted = set(self.cfg.conditions)
        kept = [c for c in self.cfg.conditions if c in wanted]
        if not kept:
            return
        cfg = self.cfg.model_copy(update={"conditions": kept})
        for job in cue_jobs(cfg, self.protocols, self.by_round[k], self.conditions, fingerprints):
            cell = (job.judge, job.protocol.name)
            if needed is None or cell not in needed or rides_with(job.condition) in needed[cell]:
                yield job


@dataclass
class SequentialRun:
    """What the rounds did: the last judgments table, the state, and why they stopped."""

    summary: RunSummary = field(default_factory=RunSummary)
    judgments: pl.DataFrame | None = None
    state: Looked | None = None
    rounds: int = 0
    requests: int = 0
    stopped: str = ""
    more: bool = False  # a batch pass stopped before rounds that may follow


def merge(into: RunSummary, more: RunSummary) -> None:
    """Add one round's runner summary to the sweep's."""
    into.sent += more.sent
    into.skipped += more.skipped
    into.deadline_hit = into.deadline_hit or more.deadline_hit
    into.pending = more.pending
    into.tripped.update(more.tripped)
    into.resumable.update(more.resumable)


Sent = tuple[RunSummary, pl.DataFrame | None, bool]
Send = Callable[[JobType[Job], JobType[Job]], Awaitable[Sent]]
"""Judge a round: given the job type of every round through it and that of the round alone;
the runner's summary, the judgments table of every round so far (None: nothing to read yet,
e.g. the round exported as a batch file), and whether a later round may follow in this pass
(not after a batch pass: its next round is the next pass's)."""


async def run_rounds(rounds: SequentialRounds, kind: JobType[Job], out: Path, console: Console,
                     send: Send) -> SequentialRun:  # fmt: skip
    """Every round until the rows settle, the documents run out or the budget would pass.

    The job type ``kind`` is the whole sweep's; each round gets it with the plan of the rounds
    so far, and ``send`` judges it. The budget is counted in requests planned before any cache,
    so a resumed run counts the same.
    """
    cfg = rounds.cfg
    placeholder = {j.name: "" for j in cfg.judges}  # counting needs no real fingerprint
    thresholds, lex = load_thresholds(), load_lexicons(None)
    swept = SequentialRun()
    plans: list[Needed] = []
    for k in range(len(rounds.plan.looks)):
        needed = rounds.needed(swept.state)
        if rounds.settled(needed):
            swept.stopped = "every row is settled"
            break
        cost = sum(requests_of(j) for j in rounds.jobs(k, placeholder, needed))
        if cfg.budget_requests and swept.requests + cost > cfg.budget_requests:
            swept.stopped = (
                f"round {k + 1} would pass budget_requests {cfg.budget_requests} "
                f"({swept.requests} planned so far, {cost} more)"
            )
            break
        plans.append(needed)
        swept.requests += cost

        def through(fingerprints: dict[str, str], last: int = k) -> Iterator[Job]:
            for j in range(last + 1):
                yield from rounds.jobs(j, fingerprints, plans[j])

        def alone(fingerprints: dict[str, str], last: int = k) -> Iterator[Job]:
            return rounds.jobs(last, fingerprints, plans[last])

        planned = sum(1 for _ in rounds.jobs(k, placeholder, needed))
        sent = await send(
            replace(kind, plan=through, planned=planned), replace(kind, plan=alone, planned=planned)
        )
        if _round_done(rounds, swept, k, sent, out, console, lex, thresholds):
            return swept
    else:
        swept.stopped = "the documents ran out"
    return swept


def _round_done(
    rounds: SequentialRounds, swept: SequentialRun, k: int, sent: Sent, out: Path,
    console: Console, lex: Lexicons, thresholds: LoadedThresholds,
) -> bool:  # fmt: skip
    """Take round ``k``'s answers and its look at the card into ``swept``.

    Returns whether this pass stops here (``swept.stopped`` then says why).
    """
    summary, frame, go_on = sent
    merge(swept.summary, summary)
    swept.rounds = k + 1
    if frame is None:
        swept.stopped = f"round {k + 1} waits for its answers"
        return True
    swept.judgments = frame
    counted = counted_judgments(RunDir(out).judgments)
    final = k == len(rounds.plan.looks) - 1
    card = look_card(counted, lex, thresholds, rounds.cfg.task)
    swept.state = look(card, k, rounds.plan, swept.state, last=final)
    settled, total = len(swept.state.settled()), len(swept.state.states)
    console.print(
        f"round {k + 1}: {rounds.plan.looks[k]} documents, {swept.requests} requests "
        f"planned; {settled} of {total} card rows settled"
    )
    if summary.deadline_hit or summary.tripped:
        swept.stopped = "the sweep stopped (deadline or circuit breaker)"
        return True
    if not go_on:
        more = not rounds.settled(rounds.needed(swept.state))
        swept.more = more and k + 1 < len(rounds.plan.looks)
        swept.stopped = f"round {k + 1} imported" + ("; export the next" if swept.more else "")
        return True
    return False


def _answered(
    out: Path, through: JobType[Job], alone: JobType[Job], fingerprints: dict[str, str]
) -> pl.DataFrame | None:
    """The judgments table through a round whose every judgment is stored final, else None."""
    if not RunDir(out).store.exists():
        return None
    store = open_store(out)
    try:
        if not all(store.is_final(job.key) for job in alone.plan(fingerprints)):
            return None
        return through.rows(through.plan(fingerprints), store, fingerprints)
    finally:
        store.close()


async def sequential_sweep(
    rounds: SequentialRounds,
    kind: JobType[Job],
    out: Path,
    console: Console,
    *,
    show_progress: bool,
    batch: tuple[Path | None, Path | None] = (None, None),
    ray: str | None = None,
    opened: Callable[[], None] | None = None,
) -> SequentialRun:
    """The rounds, sent live, on Ray (``ray``: "" a local one) or as batch passes.

    ``batch``: the file to export to, or the one to import from. Live, the judges are probed
    once and the store stays open across rounds. On Ray each round is a Ray sweep of its own.
    A batch pass walks the rounds already answered, then exports the first one that is not
    (one round per file) or imports its answers, and stops there.
    """
    cfg = rounds.cfg
    once = _once(opened)
    if batch != (None, None):
        return await run_rounds(
            rounds, kind, out, console, _by_batch(cfg, out, console, batch, once)
        )
    if ray is not None:

        async def by_ray(through: JobType[Job], alone: JobType[Job]) -> Sent:
            swept = await ray_sweep(
                through, cfg.judges, cfg.engine, out, console, ray or None,
                show_progress=show_progress, opened=once,
            )  # fmt: skip
            return swept.summary, swept.judgments, True

        return await run_rounds(rounds, kind, out, console, by_ray)
    return await _live_rounds(rounds, kind, out, console, show_progress=show_progress, opened=once)


def _once(opened: Callable[[], None] | None) -> Callable[[], None]:
    """``opened``, called the first time only (the run directory exists from then on)."""
    pending = [opened]

    def once() -> None:
        if pending[0] is not None:
            pending[0]()
            pending[0] = None

    return once


def _by_batch(
    cfg: SweepConfig, out: Path, console: Console, batch: tuple[Path | None, Path | None],
    opened: Callable[[], None],
) -> Send:  # fmt: skip
    """A round as a batch pass: answered already, exported, or imported (then it stops)."""
    export, imported = batch
    declared = {j.name: batch_info(j).fingerprint for j in cfg.judges}

    async def by_batch(through: JobType[Job], alone: JobType[Job]) -> Sent:
        done = _answered(out, through, alone, declared)
        if done is not None:
            return RunSummary(skipped=alone.planned), done, True
        summary, frame = await batch_sweep(
            through, cfg.judges, cfg.engine, out, console, export, imported, opened=opened
        )  # fmt: skip
        return summary, frame, False  # an export's frame is None: nothing answered yet

    return by_batch


async def _live_rounds(
    rounds: SequentialRounds, kind: JobType[Job], out: Path, console: Console, *,
    show_progress: bool, opened: Callable[[], None],
) -> SequentialRun:  # fmt: skip
    """The rounds sent live: the judges probed once, the store open across rounds."""
    cfg = rounds.cfg
    async with judges_open(
        cfg.judges, cfg.engine, console, kind.checks, texts_only=kind.texts_only
    ) as endpoints:
        fingerprints = {name: ep.info.fingerprint for name, ep in endpoints.items()}
        store = open_store(out)
        try:
            RunDir(out).write_manifest(kind.manifest(endpoints))
            opened()

            async def live(through: JobType[Job], alone: JobType[Job]) -> Sent:
                summary = await run_planned(
                    alone, endpoints, store, cfg.engine, console, show_progress=show_progress
                )  # fmt: skip
                store.flush()
                frame = through.rows(through.plan(fingerprints), store, fingerprints)
                return summary, frame, True

            return await run_rounds(rounds, kind, out, console, live)
        finally:
            store.close()


def pilot_profile(
    rounds: SequentialRounds, out: Path, cells: Iterable[tuple[str, str, str]]
) -> tuple[dict[tuple[str, str, str], list[float]], int]:
    """Each cell's chance of being planned in each round, from the rounds ``out`` already judged.

    The pilot is what a run in ``out`` judged so far (a first round, say, stopped by its
    ``budget_requests``): its looks are replayed as the run took them, and a cell whose rows
    they settled is planned no further (its chance 0 from the next round on); every other cell
    stays open to the end, the worst case for it. No pilot: every cell open (the profile is
    empty, and the expected spend is the worst case). Returns the profile and the rounds the
    pilot judged.
    """
    run = RunDir(out)
    if not run.judgments.is_file():
        return {}, 0
    judged = counted_judgments(run.judgments)
    state, looked = replay(
        judged, rounds.plan, load_lexicons(None), load_thresholds(), rounds.cfg.task
    )
    if state is None or looked == 0:
        return {}, 0
    needed = rounds.needed(state)
    total = len(rounds.plan.looks)
    profile: dict[tuple[str, str, str], list[float]] = {}
    for judge, protocol, condition in cells:
        still = needed is None or condition in needed.get((judge, protocol), {condition})
        profile[judge, protocol, condition] = [1.0] * looked + [float(still)] * (total - looked)
    return profile, looked
