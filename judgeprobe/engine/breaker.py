"""Refusing runs a judge cannot serve.

A circuit breaker while sending, an Invalid-rate check at the end.

A judge that answers the probe but ignores the schema on real requests (or refuses every
request) would otherwise turn a whole sweep into Invalid rows at full cost. The breaker
watches each judge's first judgments in this run: when its first ``after`` all end Invalid
for a reason a resume would not clear (a reply that does not conform, a 4xx refusal), the
rest of that judge's judgments are not sent. They are stored as retryable Invalid ("not
run: circuit breaker ..."), so a ``--resume`` after the judge is fixed sends them. One valid
judgment disarms the breaker for the rest of the run; retryable failures (timeouts, 5xx)
neither count nor disarm it. ``unreliable`` then names every judge whose Invalid share of
the judgments that ran is above the configured rate (the CLI exits 4).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

import polars as pl

from judgeprobe.core.records import INVALID, NOT_RUN, never_ran
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.runner import Routable
from judgeprobe.engine.store import Outcome, Store

J = TypeVar("J", bound=Routable)


class Breaker:
    """Per judge: trips after ``after`` non-clearing Invalid judgments and no valid one."""

    def __init__(self, after: int, unit: str = "judgments") -> None:
        self.after = after  # 0 = never trip
        self.unit = unit  # what a job is, for the reason (the builder's are documents)
        self.failed: Counter[str] = Counter()
        self.reasons: dict[str, Counter[str]] = {}
        self.cleared: set[str] = set()
        self.tripped: dict[str, str] = {}  # judge -> why

    def record(self, judge: str, outcome: Outcome) -> None:
        """Count a judge's Invalid outcomes until its first valid one; trip after ``after``."""
        if not self.after or judge in self.cleared or judge in self.tripped:
            return
        if outcome.status == "valid":
            self.cleared.add(judge)
            return
        if outcome.retryable:
            return
        self.failed[judge] += 1
        self.reasons.setdefault(judge, Counter())[outcome.invalid_reason[:120]] += 1
        if self.failed[judge] >= self.after:
            (reason, n), *_ = self.reasons[judge].most_common(1)
            self.tripped[judge] = (
                f"its first {self.after} {self.unit} were all Invalid (most often, {n}×: {reason})"
            )

    def skip(self, key: str, judge: str, model: str) -> Outcome | None:
        """The Outcome of a judgment not sent because its judge's breaker tripped."""
        why = self.tripped.get(judge)
        if why is None:
            return None
        return Outcome(
            key=key,
            status="invalid",
            verdict=INVALID,
            invalid_reason=f"{NOT_RUN}: circuit breaker: judge {judge}: {why}; "
            "fix the judge and rerun with --resume",
            retryable=True,
            model=model,
        )


def invalid_rates(frame: pl.DataFrame) -> pl.DataFrame:
    """Per judge: judgments that ran, how many are Invalid, and their share (null if none ran)."""
    ran = ~never_ran()
    return (
        frame.group_by("judge")
        .agg(
            ran=ran.sum(),
            invalid=(ran & (pl.col("verdict") == INVALID)).sum(),
        )
        .with_columns(rate=pl.when(pl.col("ran") > 0).then(pl.col("invalid") / pl.col("ran")))
        .sort("judge")
    )


def unreliable(frame: pl.DataFrame, max_rate: float) -> pl.DataFrame:
    """The judges whose Invalid share of the judgments that ran is above ``max_rate``."""
    return invalid_rates(frame).filter(pl.col("rate") > max_rate)


def guarded(
    make: Callable[[J, Endpoint, Store], Awaitable[Outcome]],
    endpoints: Mapping[str, Endpoint],
    store: Store,
    breaker: Breaker | None,
) -> Callable[[J], Awaitable[Outcome]]:
    """One job → its outcome by ``make`` on its judge's endpoint, unless its breaker tripped."""

    async def handle(job: J) -> Outcome:
        endpoint = endpoints[job.judge]
        if breaker is None:
            return await make(job, endpoint, store)
        skipped = breaker.skip(job.key, job.judge, endpoint.info.model)
        if skipped is not None:
            return skipped
        outcome = await make(job, endpoint, store)
        breaker.record(job.judge, outcome)
        return outcome

    return handle
