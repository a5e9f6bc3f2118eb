"""The one sweep runner: probe → store → scheduled jobs → judgments table, for any job type.

The cue sweep (``run``), the rubric probe (``rubric``) and the candidate builder (``candidates``)
differ only in what a job is, how it is made and how the finished jobs become rows. They
pass those as a ``JobType``; everything else — probing every judge with its credentials,
opening the store only once nothing can fail any more, the manifest, the streaming scheduler
with its circuit breaker and deadline, the progress bar, closing every connection — lives
here, once. A job of the cue sweep or the rubric probe is one judgment; one of the builder is
one document (its texts, written by the author), whose outcome carries them in ``details``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Iterable, Sequence
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic

import polars as pl
from rich.console import Console

from judgeprobe.engine.breaker import Breaker, guarded
from judgeprobe.engine.checks import PlanChecks, check_plan
from judgeprobe.engine.client import Endpoint, close_all
from judgeprobe.engine.probe import probe_endpoint
from judgeprobe.engine.progress import SweepProgress
from judgeprobe.engine.runner import J, RunSummary, run_jobs
from judgeprobe.engine.settings import EngineConfig, JudgeConfig
from judgeprobe.engine.store import Outcome, Store
from judgeprobe.runs.rundir import RunDir, open_store

MAX_GROUP = 16  # most jobs of one group (document) run back to back in one lane


async def probe_judges(
    judges: Sequence[JudgeConfig],
    engine: EngineConfig,
    console: Console,
    texts_only: frozenset[str] = frozenset(),
) -> dict[str, Endpoint]:
    """Probe every judge (every replica); close what was opened if one fails.

    Every judge's credentials are resolved first, so a missing key fails before any server
    is asked anything. A judge in ``texts_only`` is sent no schema by the sweep: its probe
    asks for a reply, not for schema enforcement.
    """
    for judge in judges:
        for url in judge.replicas:
            judge.auth_headers(url)
    endpoints: dict[str, Endpoint] = {}
    try:
        for judge in judges:
            schema = judge.name not in texts_only
            endpoints[judge.name] = await probe_endpoint(judge, engine, schema=schema)
            info = endpoints[judge.name].info
            replicas = f" (+{len(judge.replicas) - 1} replicas)" if len(judge.replicas) > 1 else ""
            console.print(
                f"judge [bold]{judge.name}[/] at {judge.url}{replicas}: {info.model} "
                f"({info.backend}, fingerprint {info.fingerprint})"
            )
    except BaseException:
        await close_all(endpoints)
        raise
    return endpoints


@asynccontextmanager
async def judges_open(
    judges: Sequence[JudgeConfig],
    engine: EngineConfig,
    console: Console,
    checks: PlanChecks | None = None,
    sweep: Sequence[JudgeConfig] | None = None,
    texts_only: frozenset[str] = frozenset(),
) -> AsyncIterator[dict[str, Endpoint]]:
    """The probed endpoints of ``judges`` for the length of a block.

    With ``checks``, the plan is checked first against every judge of the sweep (``sweep``;
    default ``judges``; one not probed by the backend its config declares), so a refusal
    comes before anything is written. ``texts_only``: judges the sweep sends no schema
    (``probe_judges``).
    """
    endpoints = await probe_judges(judges, engine, console, texts_only)
    try:
        if checks is not None:
            await check_plan(checks, judges if sweep is None else sweep, endpoints)
        yield endpoints
    finally:
        await close_all(endpoints)


@dataclass(frozen=True)
class JobType(Generic[J]):
    """What a sweep's jobs are: everything the runner needs that differs between sweeps.

    ``plan`` gets the judges' fingerprints (request keys include them) and may be called
    twice (to send, then to read back), so it must be deterministic. ``rows`` reads the
    planned jobs back from the store as the judgments table and writes it. ``group`` keeps a
    group's jobs (a document's) back to back in one lane, so its prompt prefix stays
    cached on one server slot. ``progress`` is what the bar says: its label and what a job is.
    ``checks`` are the plan's checks of the probed judges, run before anything is written.
    ``texts_only`` names the judges whose every request reads free text (no schema sent), so
    their start-up probe asks for a reply, not for schema enforcement.
    """

    plan: Callable[[dict[str, str]], Iterable[J]]
    make: Callable[[J, Endpoint, Store], Awaitable[Outcome]]
    rows: Callable[[Iterable[J], Store, dict[str, str]], pl.DataFrame]
    manifest: Callable[[dict[str, Endpoint]], dict[str, Any]]
    planned: int
    lanes: dict[str, int]
    group: Callable[[J], Hashable] | None = None
    progress: tuple[str, str] = ("judging", "judgments")
    checks: PlanChecks | None = None
    texts_only: frozenset[str] = frozenset()


@dataclass
class Swept:
    """A finished (or deadline-stopped) sweep: its judgments and what the scheduler did."""

    judgments: pl.DataFrame
    summary: RunSummary


async def run_planned(
    kind: JobType[J],
    endpoints: dict[str, Endpoint],
    store: Store,
    engine: EngineConfig,
    console: Console | None = None,
    *,
    show_progress: bool = True,
    progress: SweepProgress | None = None,
) -> RunSummary:
    """Every planned job not already final through the engine into ``store``, under a bar.

    The bar is opened here on ``console``, or is ``progress`` when the caller holds one open
    (a benchmark reading its counts). A group's run is capped at planned jobs / lanes, so a
    sweep of fewer groups than lanes still keeps every lane busy.
    """
    fingerprints = {name: ep.info.fingerprint for name, ep in endpoints.items()}
    total = max(1, sum(kind.lanes.values()))
    max_group = min(MAX_GROUP, -(-kind.planned // total)) if kind.planned else MAX_GROUP
    jobs = kind.plan(fingerprints)
    breaker = Breaker(engine.breaker_after, unit=kind.progress[1])
    handle = guarded(kind.make, endpoints, store, breaker)
    label, unit = kind.progress
    with ExitStack() as held:
        if progress is None:
            bar = SweepProgress(
                kind.planned, console, enabled=show_progress, label=label, unit=unit
            )
            progress = held.enter_context(bar)
        summary = await run_jobs(
            jobs, handle, kind.lanes, store, progress, engine.sweep_deadline_s,
            group=kind.group, max_group=max(1, max_group),
        )  # fmt: skip
    summary.tripped = breaker.tripped
    return summary


async def run_sweep(
    kind: JobType[J],
    endpoints: dict[str, Endpoint],
    engine: EngineConfig,
    out: Path,
    console: Console,
    *,
    show_progress: bool = True,
    opened: Callable[[], None] | None = None,
) -> Swept:
    """Open the run's store, write its manifest, run every job and read the rows back.

    ``opened`` runs once the run directory and its manifest exist, before anything is sent
    (e.g. to write side tables or announce the plan).
    """
    store = open_store(out)
    try:
        RunDir(out).write_manifest(kind.manifest(endpoints))
        if opened is not None:
            opened()
        summary = await run_planned(
            kind, endpoints, store, engine, console, show_progress=show_progress
        )
        if summary.deadline_hit:
            console.print(
                f"[yellow]sweep deadline ({engine.sweep_deadline_s:g}s) reached: sending "
                "stopped; what finished is read back now, after it (the deadline covers "
                "sending only)[/]"
            )
        store.flush()
        fingerprints = {name: ep.info.fingerprint for name, ep in endpoints.items()}
        frame = kind.rows(kind.plan(fingerprints), store, fingerprints)
    finally:
        store.close()
    return Swept(frame, summary)


async def live_sweep(
    kind: JobType[J],
    judges: Sequence[JudgeConfig],
    engine: EngineConfig,
    out: Path,
    console: Console,
    *,
    show_progress: bool = True,
    opened: Callable[[], None] | None = None,
) -> Swept:
    """Probe ``judges``, check the plan against them (``kind.checks``), then ``run_sweep``.

    Only once every check passed does the run directory get written.
    """
    async with judges_open(
        judges, engine, console, kind.checks, texts_only=kind.texts_only
    ) as endpoints:
        return await run_sweep(
            kind, endpoints, engine, out, console, show_progress=show_progress, opened=opened
        )
