"""The streaming scheduler: a bounded queue per judge feeding a pool of lanes.

Jobs are pulled from the plan as lanes free up, so memory stays bounded however long the
sweep. Judgments already final in the store are skipped (resume), and a key already in
flight is not run twice. The sweep deadline cancels what is left; those judgments simply
have no stored outcome, appear as Invalid ("not run") in the table, and run on resume.

Prefix-aware scheduling: with ``group`` (e.g. the document), consecutive jobs of one group
and judge travel together as one chunk (at most ``max_group`` jobs) and one lane runs them
back to back. Its requests then reach the server one after another with the same long
prefix, which lands them on the slot that has that prefix cached (llama.cpp picks the idle
slot with the most similar prompt; vLLM's automatic prefix caching keeps recent prefixes).
Without ``group`` every job is its own chunk.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from judgeprobe.engine.progress import SweepProgress
from judgeprobe.engine.store import Outcome, Store


class Routable(Protocol):
    """What the runner needs of a job: a store key and the judge that answers it."""

    @property
    def key(self) -> str:
        """The job's store key, for resume and deduplication."""

    @property
    def judge(self) -> str:
        """The judge whose endpoint runs the job."""


J = TypeVar("J", bound=Routable)


@dataclass(slots=True)
class RunSummary:
    """What a run of jobs did, so the caller can tell a complete run from an interrupted one."""

    sent: int = 0
    skipped: int = 0
    deadline_hit: bool = False
    pending: int = 0  # judgments waiting for a batch answer (batch import)
    tripped: dict[str, str] = field(default_factory=dict)  # judge -> why its breaker tripped
    # Judgments that ended Invalid for a reason a resume may clear (transport, breaker), by
    # reason: a run with any is incomplete, never done.
    resumable: Counter[str] = field(default_factory=Counter)

    def record(self, outcome: Outcome) -> None:
        """Count a finished judgment that a resume would send again."""
        if outcome.status != "valid" and outcome.retryable:
            self.resumable[outcome.invalid_reason[:160]] += 1


async def run_jobs(
    jobs: Iterable[J],
    handle: Callable[[J], Awaitable[Outcome]],
    workers_per_judge: dict[str, int],
    store: Store,
    progress: SweepProgress,
    deadline_s: float | None = None,
    group: Callable[[J], Hashable] | None = None,
    max_group: int = 16,
) -> RunSummary:
    """Run every job not already final in ``store``; ``handle`` makes one judgment."""
    summary = RunSummary()
    in_flight: set[str] = set()

    async def work(queue: asyncio.Queue[list[J] | None]) -> None:
        while (chunk := await queue.get()) is not None:
            for job in chunk:
                result = await handle(job)
                store.put_outcome(result)
                summary.record(result)
                in_flight.discard(job.key)
                progress.finished(result)

    queues, lanes = _lanes(workers_per_judge, work)

    async def produce() -> None:
        open_chunks: dict[str, tuple[Hashable, list[J]]] = {}
        for job in jobs:
            if job.key in in_flight or store.is_final(job.key):
                summary.skipped += 1
                progress.skipped()
                continue
            in_flight.add(job.key)
            summary.sent += 1
            if group is None:
                await queues[job.judge].put([job])
            elif (closed := _add_to_chunk(open_chunks, job, group(job), max_group)) is not None:
                await queues[job.judge].put(closed)
        for judge, (_, chunk) in open_chunks.items():
            await queues[judge].put(chunk)
        await _end_queues(queues, workers_per_judge)

    summary.deadline_hit = await _together([produce(), *lanes], deadline_s)
    return summary


def _lanes(
    workers_per_judge: dict[str, int],
    work: Callable[[asyncio.Queue[list[J] | None]], Coroutine[object, object, None]],
) -> tuple[dict[str, asyncio.Queue[list[J] | None]], list[Coroutine[object, object, None]]]:
    """One bounded queue per judge and its lanes; the bound keeps the plan streaming."""
    queues: dict[str, asyncio.Queue[list[J] | None]] = {}
    lanes: list[Coroutine[object, object, None]] = []
    for judge, n_workers in workers_per_judge.items():
        queues[judge] = asyncio.Queue(maxsize=n_workers * 2)
        lanes += [work(queues[judge]) for _ in range(n_workers)]
    return queues, lanes


async def _together(tasks: list[Coroutine[object, object, None]], deadline_s: float | None) -> bool:
    """Run the producer and the lanes to the end; True if the deadline stopped them.

    One task group: a lane that fails (a bug in a handler, not a failed request, which is an
    Invalid outcome) cancels the producer and the other lanes, and its error is raised here.
    As bare tasks, a lane died alone, its queue filled, and the producer waited on it for ever.
    """
    try:
        async with asyncio.timeout(deadline_s), asyncio.TaskGroup() as group:
            for task in tasks:
                group.create_task(task)
    except TimeoutError:
        return True
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return False


def _add_to_chunk(
    open_chunks: dict[str, tuple[Hashable, list[J]]], job: J, key: Hashable, max_group: int
) -> list[J] | None:
    """Add ``job`` to its judge's open chunk; return the chunk it closed, if any.

    A chunk closes when the group changes or it holds ``max_group`` jobs, so one lane sends a
    group's requests back to back (prefix-aware scheduling) without holding a lane forever.
    """
    current = open_chunks.get(job.judge)
    closed = None
    if current is not None and (current[0] != key or len(current[1]) >= max_group):
        closed, current = current[1], None
    if current is None:
        open_chunks[job.judge] = current = (key, [])
    current[1].append(job)
    return closed


async def _end_queues(
    queues: dict[str, asyncio.Queue[list[J] | None]], workers_per_judge: dict[str, int]
) -> None:
    """Tell every lane that no more chunks come (one ``None`` per lane)."""
    for judge, queue in queues.items():
        for _ in range(workers_per_judge[judge]):
            await queue.put(None)
