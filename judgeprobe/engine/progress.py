"""rich progress for a sweep.

done/total judgments, judgments/s and requests/s, invalid, retries, ETA. Requests/s is the server's
load (a PBP judgment is three requests, a re-ask or retry one more); judgments/s is what finishes.
A sweep of other jobs (the candidate builder's documents) names its own ``label`` and ``unit``.

Updates are counters; the display is told at most every ``REFRESH_S`` seconds (and on
exit), so the cost per request is a few additions however fast requests complete.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)

from judgeprobe.engine.store import Outcome

REFRESH_S = 0.1


@dataclass(frozen=True, slots=True)
class ProgressUpdate:
    """What a sweep has done so far, as a progress listener is told it."""

    label: str
    done: int
    total: int
    valid: int
    invalid: int
    cached: int
    retries: int
    requests: int
    elapsed_s: float


PROGRESS_LISTENER: ContextVar[Callable[[ProgressUpdate], None] | None] = ContextVar(
    "judgeprobe_progress_listener", default=None
)
"""Told every refresh of every sweep's progress in this context (the API's ``progress=``
callback), with or without the bar; unset: only the bar."""


class SweepProgress:
    """Counts outcomes and shows them; usable with ``enabled=False`` for quiet runs."""

    def __init__(
        self,
        total: int,
        console: Console | None = None,
        *,
        enabled: bool = True,
        label: str = "judging",
        unit: str = "judgments",
    ) -> None:
        self.total = total
        self.valid = self.invalid = self.cached = self.retries = self.requests = 0
        self._start = self._shown = time.monotonic()
        self._label = label
        self._listener = PROGRESS_LISTENER.get()
        self._progress = Progress(
            TextColumn(f"[bold]{label}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn(f"{{task.fields[rate]:.2f}} {unit}/s · {{task.fields[req_rate]:.2f}} req/s"),
            TextColumn(
                "[green]{task.fields[valid]} ok[/] [yellow]{task.fields[invalid]} invalid[/]"
            ),
            TextColumn("{task.fields[retries]} retries · {task.fields[cached]} cached"),
            TimeRemainingColumn(),
            console=console,
            disable=not enabled,
            refresh_per_second=4,
        )
        self._task = self._progress.add_task(
            label, total=total, rate=0.0, req_rate=0.0, valid=0, invalid=0, retries=0, cached=0
        )

    def __enter__(self) -> SweepProgress:
        self._progress.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._refresh(force=True)
        self._progress.stop()

    @property
    def done(self) -> int:
        """Judgments finished in any way, for the done/total column."""
        return self.valid + self.invalid + self.cached

    def note(self, text: str) -> None:
        """A line above the bar (a round's summary), also when the bar is off."""
        self._progress.console.print(text)

    def skipped(self, n: int = 1) -> None:
        """Requests already in the store (resume) or duplicates of one in flight."""
        self.cached += n
        self._refresh()

    def finished(self, outcome: Outcome) -> None:
        """Count one finished judgment as valid or invalid."""
        if outcome.status == "valid":
            self.valid += 1
        else:
            self.invalid += 1
        self.requests += outcome.attempts  # every request sent for it: stages, re-asks, retries
        sent_again = outcome.reasks + outcome.escalations  # not transport retries
        self.retries += max(0, outcome.attempts - len(outcome.request_keys) - sent_again)
        self._refresh()

    def _refresh(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._shown < REFRESH_S:
            return
        self._shown = now
        elapsed = max(1e-9, now - self._start)
        if self._listener is not None:
            update = ProgressUpdate(
                self._label, self.done, self.total, self.valid, self.invalid,
                self.cached, self.retries, self.requests, elapsed,
            )  # fmt: skip
            self._listener(update)
        self._progress.update(
            self._task,
            completed=self.done,
            rate=(self.valid + self.invalid) / elapsed,
            req_rate=self.requests / elapsed,
            valid=self.valid,
            invalid=self.invalid,
            retries=self.retries,
            cached=self.cached,
        )
