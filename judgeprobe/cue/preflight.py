"""The cue sweep's side of the plan-time checks: every distinct first request of the sweep.

A judgment's first request (its prompt holds the document and both candidates) is taken from
its protocol itself, nothing sent, and handed down as plain data (``FirstRequest``): the
sweep's ``PlanChecks`` (``judgeprobe.engine.checks``) check the sampling and seeds against
each judge's backend and these requests against the context it serves
(``judgeprobe.engine.context``), once the judges are probed and before anything is written.
Later stages (PBP's score and rank, a Reveal-After turn) carry earlier replies, bounded by
the stage budgets, and are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import orjson
from pydantic import BaseModel

from judgeprobe.conditions import Condition
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.job import Job
from judgeprobe.cue.stream import cue_jobs
from judgeprobe.engine.context import FirstRequest
from judgeprobe.engine.store import Result
from judgeprobe.protocols import JudgeProtocol
from judgeprobe.protocols.base import Message


class _Captured(Exception):
    def __init__(self, messages: Sequence[Message], max_tokens: int) -> None:
        super().__init__("first request")
        self.messages = [dict(m) for m in messages]
        self.max_tokens = max_tokens


async def _capture(
    messages: Sequence[Message], reply_model: type[BaseModel], max_tokens: int
) -> Result:
    raise _Captured(messages, max_tokens)


async def first_request(job: Job) -> FirstRequest:
    """The request a judgment opens with, taken from its protocol itself (nothing is sent)."""
    try:
        await job.protocol.run(job.presentation, _capture)
    except _Captured as first:
        return FirstRequest(
            first.messages, first.max_tokens, job.item_id, job.protocol.name, job.condition
        )
    raise AssertionError(f"protocol {job.protocol.name} sent no request")


async def first_requests(
    cfg: SweepConfig,
    protocols: Mapping[str, JudgeProtocol],
    items: Sequence[Item],
    conditions: dict[str, Condition],
) -> list[FirstRequest]:
    """Every distinct first request of the sweep (the same for every judge)."""
    one = cfg.model_copy(update={"judges": cfg.judges[:1]})
    found: dict[bytes, FirstRequest] = {}
    for job in cue_jobs(one, protocols, items, conditions, {one.judges[0].name: ""}):
        first = await first_request(job)
        found.setdefault(orjson.dumps([first.messages, first.max_tokens]), first)
    return list(found.values())
