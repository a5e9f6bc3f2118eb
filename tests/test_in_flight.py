"""Two judgments that ask the same request at the same time send it once.

A shared screen (an identical pair, a relabelled twin) gives two judgments one request key;
when they run together, the second waits for the first's answer instead of sending it again.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from judgeprobe.engine.cached import CachedAsker
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.probe import server_info
from judgeprobe.engine.request import Sampling
from judgeprobe.engine.settings import EngineConfig, JudgeConfig
from judgeprobe.engine.store import Result, Store
from judgeprobe.protocols.replies import PairwiseReply
from tests.fakeserver import FakeJudge

MESSAGES = [{"role": "user", "content": "Which summary is better? Summary 1: a. Summary 2: b."}]


@asynccontextmanager
async def _askers(url: str, store: Store, n: int) -> AsyncIterator[list[CachedAsker]]:
    """``n`` judgments' askers on one endpoint of the judge at ``url``, closed on exit."""
    judge = JudgeConfig(name="j", url=url, concurrency=4)
    endpoint = Endpoint(judge, EngineConfig(), server_info("vllm", "fake-judge", {}))
    try:
        yield [CachedAsker(endpoint, store, Sampling(), seed=0) for _ in range(n)]
    finally:
        await endpoint.close()


async def _together(url: str, store: Store) -> list[Result]:
    async with _askers(url, store, 3) as askers:
        return await asyncio.gather(*(ask(MESSAGES, PairwiseReply, 200) for ask in askers))


def test_one_request_for_judgments_asking_it_together(tmp_path: Path) -> None:
    store = Store(tmp_path / "store.sqlite")
    with FakeJudge(latency_s=0.5) as judge:
        results = asyncio.run(_together(judge.url, store))
    assert judge.chat_requests == 1
    assert [r.status for r in results] == ["valid"] * 3
    assert len({r.key for r in results}) == 1
    assert store.get(results[0].key) == results[0]


async def _sender_cancelled(url: str, store: Store) -> Result:
    async with _askers(url, store, 2) as (first, second):
        sender = asyncio.create_task(first(MESSAGES, PairwiseReply, 200))
        await asyncio.sleep(0.1)  # the first is in flight
        waiter = asyncio.create_task(second(MESSAGES, PairwiseReply, 200))
        await asyncio.sleep(0.1)  # the second waits for it
        sender.cancel()
        return await waiter


def test_a_waiting_judgment_asks_for_itself_when_the_sender_stops(tmp_path: Path) -> None:
    store = Store(tmp_path / "store.sqlite")
    with FakeJudge(latency_s=0.5) as judge:
        result = asyncio.run(_sender_cancelled(judge.url, store))
    assert result.status == "valid"
    assert judge.chat_requests == 2  # the cancelled send, then the waiter's own
