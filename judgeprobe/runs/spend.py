"""What a run actually spent, recorded in its manifest (``spend``) and said by its report.

Requests and tokens are read from the run's store: every request it holds, over every session
of the run (a resume adds to them; a retried request counts as its last try), with the HTTP
attempts that retries, re-asks and escalations took. Seconds are the sweep's wall time, added
up over the sessions. The cost is each judge's ``price`` over the tokens its server counted;
a judge without a price leaves the cost unknown (``None``). The plan's bill
(``judgeprobe.cue.bill``) is the same quantities before the first request.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict

from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.engine.store import Store, Usage
from judgeprobe.runs.rundir import RunDir


class JudgeSpend(BaseModel):
    """One judge's spend."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    requests: int
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None


class Spend(BaseModel):
    """A run's spend in all and per judge."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requests: int
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    cost_usd: float | None
    judges: list[JudgeSpend]

    def sentence(self) -> str:
        """The spend in words, for the report."""
        cost = "no price set" if self.cost_usd is None else f"${self.cost_usd:,.4f}"
        return (
            f"spent {self.requests:,} requests ({self.attempts:,} HTTP attempts), "
            f"{self.prompt_tokens:,} prompt + {self.completion_tokens:,} completion tokens, "
            f"{self.seconds:,.1f} s, {cost}"
        )


def spent(store: Store, judges: Sequence[JudgeConfig], seconds: float) -> Spend:
    """The run's spend from its ``store``, priced by its ``judges``; ``seconds`` of sweeping."""
    usage = store.usage()
    per: list[JudgeSpend] = []
    for judge in judges:
        used = usage.get(judge.name)
        if used is None:
            used = Usage()
        price = judge.price
        cost = price.cost(used.prompt_tokens, used.completion_tokens) if price else None
        per.append(JudgeSpend(name=judge.name, cost_usd=cost, **used.model_dump()))
    costs = [j.cost_usd for j in per]
    return Spend(
        requests=sum(j.requests for j in per),
        attempts=sum(j.attempts for j in per),
        prompt_tokens=sum(j.prompt_tokens for j in per),
        completion_tokens=sum(j.completion_tokens for j in per),
        seconds=round(seconds, 3),
        cost_usd=None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
        judges=per,
    )


def earlier_seconds(run: RunDir) -> float:
    """The sweeping seconds a run's earlier sessions recorded (0 for a new run)."""
    manifest = run.manifest_or_none()
    found = manifest.spend if manifest is not None else None
    return float(found.get("seconds", 0.0)) if isinstance(found, dict) else 0.0


def record_spend(run: RunDir, spend: Spend) -> None:
    """Add ``spend`` to the run's manifest (written before the sweep, so it is there)."""
    data: dict[str, Any] = orjson.loads(run.manifest_file.read_bytes())
    run.write_manifest({**data, "spend": spend.model_dump()})
