"""A judge's ``rate_limit`` caps the admitted request rate exactly, fractional rates included."""

from __future__ import annotations

import asyncio
import time

import orjson

from judgeprobe.engine.client import Endpoint, ServerInfo
from judgeprobe.engine.settings import EngineConfig, JudgeConfig
from tests.fakeserver import FakeJudge


async def _send_times(url: str, rate: float, n: int) -> list[float]:
    judge = JudgeConfig(name="j", url=url, concurrency=n, rate_limit=rate)
    endpoint = Endpoint(judge, EngineConfig(), ServerInfo("vllm", "fake", "fp"))
    body = orjson.dumps({"model": "fake", "messages": [{"role": "user", "content": "hi"}]})
    done: list[float] = []

    async def one() -> None:
        await endpoint._post(body, 0, time.monotonic() + 60)
        done.append(time.monotonic())

    start = time.monotonic()
    try:
        await asyncio.gather(*(one() for _ in range(n)))
    finally:
        await endpoint.close()
    return [t - start for t in sorted(done)]


def test_fractional_rate_is_not_rounded_up() -> None:
    # 2.5 req/s: six requests need at least five gaps of 0.4 s. Rounded up to 3/s (the old
    # behaviour) the last of them was admitted after about one second.
    with FakeJudge() as judge:
        times = asyncio.run(_send_times(judge.url, 2.5, 6))
    assert times[-1] >= 5 * 0.4 - 0.05
    assert judge.chat_requests == 6
