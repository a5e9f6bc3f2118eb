"""What may be retried, and how long to wait before the next attempt.

Only failures that can clear are retried: 408, 409, 429, 5xx, connection errors and timeouts.
400/401/403/404/422 never are. The wait is tenacity's full-jitter exponential backoff, or
the server's Retry-After when it names a longer one (either form: seconds or an HTTP date).
Every failure comes from the engine's own aiohttp transport (``client``, ``probe``): an
``HTTPStatusError``, an aiohttp error or a timeout.
"""

from __future__ import annotations

import asyncio
import math
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import aiohttp
from tenacity import RetryCallState
from tenacity.wait import wait_base, wait_random_exponential

RETRYABLE_STATUS = frozenset({408, 409, 429})


class HTTPStatusError(Exception):
    """A non-2xx answer from a judge server."""

    def __init__(self, status_code: int, message: str, retry_after: str | None = None) -> None:
        super().__init__(f"HTTP {status_code}: {message}")
        self.status_code = status_code
        self.message = message
        self.retry_after = retry_after


class Unreachable(Exception):
    """Every replica of a judge refused connections until the request deadline (an outage)."""

    def __init__(self, replicas: int) -> None:
        what = "its server" if replicas == 1 else f"all {replicas} replicas"
        super().__init__(f"judge unreachable: {what} refused connections until the deadline")


class BadResponse(Exception):
    """A 2xx answer that is not a chat completion (a proxy or server fault; may clear)."""


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of a failure; None for one that got no answer."""
    return exc.status_code if isinstance(exc, HTTPStatusError) else None


def is_retryable(exc: BaseException) -> bool:
    """Whether a failure is transient (429, 5xx, timeouts, resets) and worth another attempt."""
    status = status_of(exc)
    if status is not None:
        return status in RETRYABLE_STATUS or status >= 500
    return isinstance(
        exc, aiohttp.ClientError | BadResponse | Unreachable | TimeoutError | asyncio.TimeoutError
    )


def is_replica_fault(exc: BaseException) -> bool:
    """A failure that says the server itself is unwell (not busy, not our request's fault)."""
    status = status_of(exc)
    if status is not None:
        return status >= 500
    return is_retryable(exc)


def is_outage(exc: BaseException) -> bool:
    """A failure to connect at all (refused, no route): the server is down, not busy."""
    return isinstance(exc, aiohttp.ClientConnectorError) and not isinstance(
        exc, aiohttp.ClientSSLError
    )


def retry_after_s(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for: delta-seconds or an HTTP date (RFC 9110).

    None (no floor) when the header is absent, unreadable, negative or a date already past.
    """
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # "-0000": RFC 5322's "UTC, source zone unknown"
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
        return seconds if seconds > 0 else None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


class RetryAfterFloor(wait_base):
    """A tenacity wait: ``wait``, never shorter than the failure's Retry-After (to ``cap_s``)."""

    def __init__(self, wait: wait_base, cap_s: float) -> None:
        self.wait = wait
        self.cap_s = cap_s

    def __call__(self, retry_state: RetryCallState) -> float:
        """Seconds before the next attempt."""
        wait = self.wait(retry_state)
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        asked = retry_after_s(exc.retry_after) if isinstance(exc, HTTPStatusError) else None
        return wait if asked is None else max(wait, min(asked, self.cap_s))


def backoff(base_s: float, cap_s: float) -> wait_base:
    """Full jitter, ``uniform(0, min(cap, base·2^(n-1)))``, with the Retry-After floor."""
    return RetryAfterFloor(wait_random_exponential(multiplier=base_s, max=cap_s), cap_s)


def describe(exc: BaseException) -> str:
    """One line naming a transport failure."""
    if isinstance(exc, HTTPStatusError):
        return f"HTTP {exc.status_code}: {exc.message[:200]}"
    if isinstance(exc, TimeoutError | asyncio.TimeoutError):
        return "timeout"
    if isinstance(exc, aiohttp.ClientError):
        return f"connection error: {exc}"[:240]
    if isinstance(exc, Unreachable):
        return str(exc)
    if isinstance(exc, BadResponse):
        return f"bad response: {exc}"[:240]
    return f"{type(exc).__name__}: {exc}"[:240]
