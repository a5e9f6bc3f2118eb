"""What may be retried, and how long to wait before the next attempt.

Only failures that can clear are retried: 408, 409, 429, 5xx, connection errors and timeouts.
400/401/403/404/422 never are. The wait is jittered exponential backoff, or the server's
Retry-After when it names a longer one.
"""

from __future__ import annotations

import asyncio
import random

import openai
from tenacity import RetryCallState

RETRYABLE_STATUS = frozenset({408, 409, 429})


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError | TimeoutError | asyncio.TimeoutError)


def retry_after_s(exc: BaseException | None) -> float | None:
    """Seconds asked for by a ``Retry-After`` header (delta-seconds form), if any."""
    if not isinstance(exc, openai.APIStatusError):
        return None
    value = exc.response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


class BackoffWait:
    """tenacity wait: full-jitter exponential backoff, never shorter than Retry-After."""

    def __init__(self, base_s: float = 0.5, cap_s: float = 30.0) -> None:
        self.base_s = base_s
        self.cap_s = cap_s

    def __call__(self, state: RetryCallState) -> float:
        ceiling = min(self.cap_s, self.base_s * 2 ** (state.attempt_number - 1))
        wait = random.uniform(0.0, ceiling)
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after_s(exc)
        if asked is not None:
            wait = max(wait, min(asked, self.cap_s))
        return wait


def describe(exc: BaseException) -> str:
    """One line naming a transport failure."""
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {str(exc.message)[:200]}"
    if isinstance(exc, openai.APITimeoutError | TimeoutError | asyncio.TimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        return f"connection error: {cause or exc}"[:240]
    return f"{type(exc).__name__}: {exc}"[:240]
