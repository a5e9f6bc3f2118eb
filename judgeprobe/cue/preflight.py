"""Plan-time checks.

Refuse, with one line and before anything is written, a sweep that a judge's backend would partly
ignore or refuse request by request.

- **Sampling** (``judgeprobe.engine.wire.check_judge``): every sampling parameter must
  reach the backend under a name it honours, and every seed must be one it reads as a seed.
- **Context**: every judgment's first request (its prompt holds the document and both
  candidates) plus its reply budget must fit the context the server reports, by the
  server's own rule: llama-server ``/props`` ``n_ctx`` (per slot: prompt + reply ≤ n_ctx),
  vLLM's ``max_model_len`` in ``/v1/models`` (prompt + max_tokens ≤ it; any server that
  lists it is checked so), TGI ``/info`` (prompt ≤ ``max_input_tokens`` and prompt +
  min(max_tokens, 1024) ≤ ``max_total_tokens``). Else each such request fails with a 4xx
  (or, on llama-server, a cut reply) judgment by judgment. Prompts are counted with the
  server's own chat template and tokenizer (vLLM ``/tokenize``, TGI ``/chat_tokenize``,
  llama-server ``/apply-template`` + ``/tokenize``); one whose UTF-8 size already proves it
  fits is not sent (a token covers at least one byte); where the server cannot count, the
  1.3-tokens-a-word approximation is used and the refusal says so. A backend that reports
  no context is not checked. Later stages (PBP's score and rank, a Reveal-After turn) carry
  earlier replies, bounded by those budgets, and are not checked here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import orjson
from pydantic import BaseModel

from judgeprobe.conditions import Condition
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.job import Job
from judgeprobe.cue.plan import cue_jobs
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.context import FirstRequest, Limit, check_context
from judgeprobe.engine.store import Result
from judgeprobe.engine.wire import check_judge
from judgeprobe.protocols import JudgeProtocol
from judgeprobe.protocols.base import Message

__all__ = ["FirstRequest", "Limit", "first_request", "first_requests", "preflight"]


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


def backend_of(cfg: SweepConfig, endpoints: dict[str, Endpoint], name: str) -> str:
    """The backend a judge's requests are shaped for.

    The probed one, or (batch files, where no server is asked) the declared one.
    """
    if name in endpoints:
        return endpoints[name].info.backend
    return next(j.backend for j in cfg.judges if j.name == name)


async def preflight(
    cfg: SweepConfig,
    protocols: Mapping[str, JudgeProtocol],
    items: Sequence[Item],
    conditions: dict[str, Condition],
    endpoints: dict[str, Endpoint],
) -> None:
    """Every plan-time check of a sweep; raises JudgeprobeError (one line) on the first problem.

    ``endpoints`` holds the probed judges (none for a batch export or import). The engine's
    checks get plain data: each judge's backend, the sampling and seeds, the first requests.
    """
    backends = {judge.name: backend_of(cfg, endpoints, judge.name) for judge in cfg.judges}

    async def requests() -> list[FirstRequest]:
        return await first_requests(cfg, protocols, items, conditions)

    for judge in cfg.judges:
        check_judge(judge, backends[judge.name], cfg.sampling, cfg.seeds)
    await check_context(endpoints, requests)
