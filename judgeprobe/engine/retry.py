"""What may be retried, and how long to wait before the next attempt.

Only failures that can clear are retried: 408, 409, 429, 5xx, connection errors and timeouts.
400/401/403/404/422 never are. The wait is jittered exponential backoff, or the server's
Retry-After when it names a longer one. Failures come from the engine's own HTTP transport
(``HTTPStatusError``, aiohttp errors) or from the openai client the start-up probe uses.
"""

from __future__ import annotations

import asyncio
import random

import aiohttp
import openai
from tenacity import RetryCallState

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
    """The HTTP status of a failure, whichever client raised it."""
    if isinstance(exc, HTTPStatusError | openai.APIStatusError):
        return exc.status_code
    return None


def is_retryable(exc: BaseException) -> bool:
    """Whether a failure is transient (429, 5xx, timeouts, resets) and worth another attempt."""
    status = status_of(exc)
    if status is not None:
        return status in RETRYABLE_STATUS or status >= 500
    return isinstance(
        exc,
        openai.APIConnectionError
        | aiohttp.ClientError
        | BadResponse
        | Unreachable
        | TimeoutError
        | asyncio.TimeoutError,
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


def retry_after_s(exc: BaseException | None) -> float | None:
    """Seconds asked for by a ``Retry-After`` header (delta-seconds form), if any."""
    if isinstance(exc, HTTPStatusError):
        value = exc.retry_after
    elif isinstance(exc, openai.APIStatusError):
        value = exc.response.headers.get("retry-after")
    else:
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


class BackoffWait:
    """tenacity wait: full-jitter exponential backoff, never shorter than Retry-After."""

    def __init__(self, base_s: float = 0.5, cap_s: float = 30.0, done: int = 0) -> None:
        self.base_s = base_s
        self.cap_s = cap_s
        self.done = done  # attempts made before tenacity took over

    def __call__(self, state: RetryCallState) -> float:
        """Seconds to wait before the next attempt: full jitter, or the server's Retry-After."""
        attempt = state.attempt_number + self.done
        ceiling = min(self.cap_s, self.base_s * 2 ** (attempt - 1))
        wait = random.uniform(0.0, ceiling)
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after_s(exc)
        if asked is not None:
            wait = max(wait, min(asked, self.cap_s))
        return wait


def describe(exc: BaseException) -> str:
    """One line naming a transport failure."""
    if isinstance(exc, HTTPStatusError | openai.APIStatusError):
        return f"HTTP {exc.status_code}: {str(exc.message)[:200]}"
    if isinstance(exc, openai.APITimeoutError | TimeoutError | asyncio.TimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        return f"connection error: {cause or exc}"[:240]
    if isinstance(exc, aiohttp.ClientError):
        return f"connection error: {exc}"[:240]
    if isinstance(exc, Unreachable):
        return str(exc)
    if isinstance(exc, BadResponse):
        return f"bad response: {exc}"[:240]
    return f"{type(exc).__name__}: {exc}"[:240]
