"""The streaming scheduler: a bounded queue per endpoint feeding a pool of workers.

Requests are pulled from the plan as workers free up, so memory stays bounded however long
the sweep. Keys already final in the store are skipped (resume), and a key already in
flight is not sent twice. The sweep deadline cancels what is left; those requests simply
have no stored result, appear as Invalid ("not run") in the judgments, and run on resume.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.progress import SweepProgress
from judgeprobe.engine.request import Request
from judgeprobe.engine.store import Store

_STOP = None


@dataclass(slots=True)
class RunOutcome:
    sent: int = 0
    skipped: int = 0
    deadline_hit: bool = False


async def run_requests(
    requests: Iterable[Request],
    endpoints: dict[str, Endpoint],
    store: Store,
    progress: SweepProgress,
    deadline_s: float | None = None,
) -> RunOutcome:
    """Run every request not already final in ``store``; return what was done."""
    outcome = RunOutcome()
    queues: dict[str, asyncio.Queue[Request | None]] = {}
    in_flight: set[str] = set()
    workers: list[asyncio.Task[None]] = []

    async def work(endpoint: Endpoint, queue: asyncio.Queue[Request | None]) -> None:
        while (req := await queue.get()) is not _STOP:
            assert req is not None
            result = await endpoint.execute(req)
            store.put(result)
            in_flight.discard(req.key)
            progress.finished(result)

    for name, endpoint in endpoints.items():
        # More workers than server slots: a worker sleeping in backoff must not idle a slot.
        n_workers = endpoint.judge.concurrency * 2
        queue: asyncio.Queue[Request | None] = asyncio.Queue(maxsize=n_workers * 2)
        queues[name] = queue
        workers += [asyncio.create_task(work(endpoint, queue)) for _ in range(n_workers)]

    async def produce() -> None:
        for req in requests:
            if req.key in in_flight or store.is_final(req.key):
                outcome.skipped += 1
                progress.skipped()
                continue
            in_flight.add(req.key)
            outcome.sent += 1
            await queues[req.endpoint].put(req)
        for name, queue in queues.items():
            for _ in range(endpoints[name].judge.concurrency * 2):
                await queue.put(_STOP)
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
