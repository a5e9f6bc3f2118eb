"""Plan-time checks: refuse, with one line and before anything is written, a sweep that
a judge's backend would partly ignore or refuse request by request.

- **Sampling** (``judgeprobe.engine.wire.check_judge``): every sampling parameter must
  reach the backend under a name it honours, and every seed must be one it reads as a seed.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgeprobe.conditions import Condition
from judgeprobe.config import SweepConfig
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.wire import check_judge
from judgeprobe.records import Item


def backend_of(cfg: SweepConfig, endpoints: dict[str, Endpoint], name: str) -> str:
    """The backend a judge's requests are shaped for: the probed one, or (batch files, where
    no server is asked) the declared one."""
    if name in endpoints:
        return endpoints[name].info.backend
    return next(j.backend for j in cfg.judges if j.name == name)


async def preflight(
    cfg: SweepConfig,
    items: Sequence[Item],
    conditions: dict[str, Condition],
    endpoints: dict[str, Endpoint],
) -> None:
    """Every plan-time check of a sweep; raises JudgeprobeError (one line) on the first
    problem. ``endpoints`` holds the probed judges (none for a batch export or import)."""
    for judge in cfg.judges:
        backend = backend_of(cfg, endpoints, judge.name)
        check_judge(judge, backend, cfg.sampling, cfg.seeds)
