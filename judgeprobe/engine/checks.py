"""A sweep's plan-time checks, once its judges' backends are known and before anything is written.

Refuse, with one line, a sweep that a judge's backend would partly ignore or refuse request by
request: every sampling parameter must reach the backend under a name it honours and every
seed must be one it reads as a seed (``judgeprobe.engine.wire.check_judge``), and every first
request plus its reply budget must fit the context the judge serves
(``judgeprobe.engine.context.check_context``). The planner above hands the checks plain data
(``PlanChecks``), so nothing here knows what a sweep is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.context import FirstRequest, check_context
from judgeprobe.engine.request import Sampling
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.engine.wire import check_judge


@dataclass(frozen=True, slots=True)
class PlanChecks:
    """What a sweep's plan asks of every judge's backend.

    ``first_requests`` gives the sweep's distinct first requests; it is awaited only when a
    judge reports its context.
    """

    sampling: Sampling
    seeds: Sequence[int]
    first_requests: Callable[[], Awaitable[list[FirstRequest]]]


async def check_plan(
    checks: PlanChecks, judges: Sequence[JudgeConfig], endpoints: dict[str, Endpoint]
) -> None:
    """Every plan-time check; raises JudgeprobeError (one line) on the first problem.

    ``endpoints`` holds the probed judges; a judge not probed (one that runs in the cluster) is
    shaped for the backend its config declares.
    """
    for judge in judges:
        probed = endpoints.get(judge.name)
        backend = probed.info.backend if probed is not None else judge.backend
        check_judge(judge, backend, checks.sampling, checks.seeds)
    await check_context(endpoints, checks.first_requests)
