"""Transport retries, re-asks and escalation are three budgets, each counted apart.

``max_attempts`` bounds the transport attempts of one send (the first included);
``max_reasks`` the re-asks of a reply that does not conform; one escalation a reply cut at
``max_tokens``. A request makes at most ``(1 + max_reasks + 1) × max_attempts`` calls.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from judgeprobe.engine.client import Completion, SendFailed, converse, send_with_retries
from judgeprobe.engine.request import Message, Request, Sampling
from judgeprobe.engine.retry import HTTPStatusError
from judgeprobe.engine.settings import EngineConfig
from judgeprobe.protocols.replies import PairwiseReply

FAST = EngineConfig(max_attempts=3, max_reasks=1, backoff_base_s=0.001, backoff_cap_s=0.01)
GOOD = '{"verdict": "Tie", "explanation": "Both say the same."}'


def _completion(text: str, finish: str = "stop") -> Completion:
    return Completion(text=text, finish_reason=finish, prompt_tokens=1, completion_tokens=1)


def _failing_then(failures: list[Exception], reply: Completion) -> tuple[list[int], object]:
    calls: list[int] = []

    async def call() -> Completion:
        calls.append(1)
        if len(calls) <= len(failures):
            raise failures[len(calls) - 1]
        return reply

    return calls, call


def test_retryable_failures_are_retried_until_one_succeeds() -> None:
    calls, call = _failing_then([HTTPStatusError(503, "busy")] * 2, _completion(GOOD))
    deadline = time.monotonic() + 30
    completion, attempts = asyncio.run(send_with_retries(call, FAST, deadline))  # type: ignore[arg-type]
    assert (completion.text, attempts, len(calls)) == (GOOD, 3, 3)


@pytest.mark.parametrize(
    ("failures", "attempts"),
    [([HTTPStatusError(400, "bad")], 1), ([HTTPStatusError(503, "busy")] * 5, 3)],
)
def test_a_send_gives_up_on_a_client_error_at_once_and_after_max_attempts(
    failures: list[Exception], attempts: int
) -> None:
    calls, call = _failing_then(failures, _completion(GOOD))
    with pytest.raises(SendFailed) as failed:
        asyncio.run(send_with_retries(call, FAST, time.monotonic() + 30))  # type: ignore[arg-type]
    assert failed.value.attempts == attempts == len(calls)


def test_the_attempt_cap_applies_per_send_and_reasks_are_counted_apart() -> None:
    # Each send fails once (503) before it answers; the first answer does not conform, so
    # the judge is re-asked once: two sends, two attempts each.
    replies = iter(["not json at all", GOOD])
    sends: list[int] = []

    async def send(messages: list[Message], round_: int, budget: int) -> Completion:
        sends.append(round_)
        if len(sends) % 2 == 1:
            raise HTTPStatusError(503, "busy")
        return _completion(next(replies))

    req = Request(
        endpoint="e", messages=({"role": "user", "content": "judge"},), schema_name="pairwise",
        schema={}, reply_model=PairwiseReply, sampling=Sampling(), seed=0, fingerprint="f",
    )  # fmt: skip
    result = asyncio.run(converse(req, send, FAST, "m", "e"))
    assert (result.status, result.attempts, result.reasks, result.escalations) == (
        "valid", 4, 1, 0,
    )  # fmt: skip
