"""Transport retries, re-asks and escalation are three budgets, each counted apart.

``max_attempts`` bounds the transport attempts of one send (the first included);
``max_reasks`` the re-asks of a reply that does not conform; one escalation a reply cut at
``max_tokens``. A request makes at most ``(1 + max_reasks + 1) × max_attempts`` calls.
"""

from __future__ import annotations

import asyncio
import random
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from tenacity import RetryCallState, wait_random_exponential

from judgeprobe.engine.client import Completion, SendFailed, converse, send_with_retries
from judgeprobe.engine.request import Message, Request, Sampling
from judgeprobe.engine.retry import HTTPStatusError, backoff, retry_after_s
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


NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("7", 7.0),  # delta-seconds
        ("0.05", 0.05),  # fractional seconds, as some proxies send
        (format_datetime(NOW + timedelta(seconds=90), usegmt=True), 90.0),  # the HTTP date
        ("Sun, 01 Mar 2026 12:02:00 GMT", 120.0),
        ("Sun, 01 Mar 2026 12:00:30 -0000", 30.0),  # a date without its zone reads as UTC
        (format_datetime(NOW - timedelta(seconds=5), usegmt=True), None),  # already past
        ("-3", None),
        ("nan", None),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after_reads_seconds_and_http_dates(
    header: str | None, seconds: float | None
) -> None:
    assert retry_after_s(header, NOW) == (pytest.approx(seconds) if seconds is not None else None)


def _waited(exc: Exception, attempt: int, base_s: float, cap_s: float) -> float:
    state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]
    state.attempt_number = attempt
    state.set_exception((type(exc), exc, None))
    return backoff(base_s, cap_s)(state)


def test_the_backoff_is_tenacitys_full_jitter_within_the_same_bounds() -> None:
    busy = HTTPStatusError(503, "busy")
    for attempt, ceiling in ((1, 0.5), (2, 1.0), (3, 2.0), (8, 30.0), (40, 30.0)):
        random.seed(attempt)
        ours = [_waited(busy, attempt, 0.5, 30.0) for _ in range(200)]
        random.seed(attempt)
        state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]
        state.attempt_number = attempt
        theirs = [wait_random_exponential(multiplier=0.5, max=30.0)(state) for _ in range(200)]
        assert ours == theirs
        assert all(0.0 <= w <= ceiling for w in ours)
        assert max(ours) > ceiling / 2  # jittered over the whole window, not pinned low


def test_retry_after_is_a_floor_in_both_forms_capped_at_the_backoff_cap() -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    for header, floor in (("7", 7.0), (later, 18.0)):  # the date loses a little to the clock
        waits = [_waited(HTTPStatusError(429, "slow", header), 1, 0.01, 30.0) for _ in range(50)]
        assert all(floor <= w <= 30.0 for w in waits)
    assert _waited(HTTPStatusError(429, "slow", "3600"), 1, 0.01, 30.0) == 30.0
    for garbage in ("whenever", "Mon, 01 Jan 2001 00:00:00 GMT"):  # no floor: the backoff alone
        assert _waited(HTTPStatusError(429, "slow", garbage), 1, 0.01, 30.0) <= 0.01
