"""The streaming scheduler: a bounded queue per endpoint feeding a pool of workers.

Jobs are pulled from the plan as workers free up, so memory stays bounded however long the
sweep. Judgments already final in the store are skipped (resume), and a key already in
flight is not run twice. The sweep deadline cancels what is left; those judgments simply
have no stored outcome, appear as Invalid ("not run") in the table, and run on resume.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from judgeprobe.engine.progress import SweepProgress
from judgeprobe.engine.store import Outcome, Store


class Routable(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def judge(self) -> str: ...


J = TypeVar("J", bound=Routable)


@dataclass(slots=True)
class RunOutcome:
    sent: int = 0
    skipped: int = 0
    deadline_hit: bool = False


async def run_jobs(
    jobs: Iterable[J],
    handle: Callable[[J], Awaitable[Outcome]],
    workers_per_judge: dict[str, int],
    store: Store,
    progress: SweepProgress,
    deadline_s: float | None = None,
) -> RunOutcome:
    """Run every job not already final in ``store``; ``handle`` makes one judgment."""
    outcome = RunOutcome()
    queues: dict[str, asyncio.Queue[J | None]] = {}
    in_flight: set[str] = set()
    workers: list[asyncio.Task[None]] = []

    async def work(queue: asyncio.Queue[J | None]) -> None:
        while (job := await queue.get()) is not None:
            result = await handle(job)
            store.put_outcome(result)
            in_flight.discard(job.key)
            progress.finished(result)

    for judge, n_workers in workers_per_judge.items():
        queues[judge] = asyncio.Queue(maxsize=n_workers * 2)
        workers += [asyncio.create_task(work(queues[judge])) for _ in range(n_workers)]

    async def produce() -> None:
        for job in jobs:
            if job.key in in_flight or store.is_final(job.key):
                outcome.skipped += 1
                progress.skipped()
                continue
            in_flight.add(job.key)
            outcome.sent += 1
            await queues[job.judge].put(job)
        for judge, queue in queues.items():
            for _ in range(workers_per_judge[judge]):
                await queue.put(None)
        await asyncio.gather(*workers)

    try:
        async with asyncio.timeout(deadline_s):
            await produce()
    except TimeoutError:
        outcome.deadline_hit = True
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    return outcome
