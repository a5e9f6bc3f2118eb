"""The protocols a sweep can name: one entry each, the name and how to build it.

A protocol is a class (``JudgeProtocol``: ``name``, ``templates``, ``stages``, ``budgets`` and
``run``); ``register_protocol`` makes its name a valid ``protocols = [...]`` entry of a sweep
config and tells the plan how to build it from the sweep's protocol options, task and judges
(``ProtocolSetup``). The built-in four are registered here, in the order comparisons list them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from judgeprobe import JudgeprobeError
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.prompts.task import DEFAULT, Task
from judgeprobe.protocols import JudgeProtocol
from judgeprobe.protocols.baseline import Baseline
from judgeprobe.protocols.budget import stage_budgets
from judgeprobe.protocols.options import ProtocolOptions
from judgeprobe.protocols.own import own_protocol
from judgeprobe.protocols.pbp import PBP
from judgeprobe.protocols.scot import SCoT


@dataclass(frozen=True)
class ProtocolSetup:
    """What a protocol is built from: the sweep's ``[protocol]`` options, task and judges."""

    options: ProtocolOptions
    task: Task = DEFAULT
    judges: Sequence[JudgeConfig] = ()

    def budgets(
        self, replies: Mapping[str, type[BaseModel]], **fixed: int | None
    ) -> dict[str, int]:
        """Each stage's ``max_tokens``: sized from its reply schema, or as ``fixed`` sets it."""
        o = self.options
        return stage_budgets(replies, o.chars_per_token, o.budget_margin, fixed)


ProtocolBuilder = Callable[[ProtocolSetup], JudgeProtocol]
"""Builds one protocol for a sweep."""

_REGISTRY: dict[str, ProtocolBuilder] = {}


def register_protocol(name: str, build: ProtocolBuilder) -> None:
    """Make ``name`` a protocol a sweep can name, built by ``build``; a name is registered once."""
    if name in _REGISTRY:
        raise ValueError(f"protocol {name} is registered already")
    _REGISTRY[name] = build


def protocol_names() -> tuple[str, ...]:
    """Every registered protocol, built-in first, in the order comparisons list them."""
    return tuple(_REGISTRY)


def build_protocol(name: str, setup: ProtocolSetup) -> JudgeProtocol:
    """Protocol ``name`` for a sweep; a JudgeprobeError names the known ones."""
    build = _REGISTRY.get(name)
    if build is None:
        known = ", ".join(_REGISTRY)
        raise JudgeprobeError(f"protocol {name} is not one of {known}")
    return build(setup)


def _baseline(s: ProtocolSetup) -> Baseline:
    fixed = s.options.baseline_max_tokens
    return Baseline(budgets=s.budgets(Baseline.replies, verdict=fixed, reveal=fixed), task=s.task)


def _scot(s: ProtocolSetup) -> SCoT:
    o = s.options
    return SCoT(
        weights=o.weights,
        tie_tolerance=o.tie_tolerance,
        budgets=s.budgets(SCoT.replies_for(s.task), verdict=o.scot_max_tokens),
        task=s.task,
    )


def _pbp(s: ProtocolSetup) -> PBP:
    o = s.options
    return PBP(
        weights=o.weights,
        tie_tolerance=o.tie_tolerance,
        score_sees_texts=o.pbp_score_sees_texts,
        task=s.task,
        budgets=s.budgets(
            PBP.replies_for(s.task),
            lock=o.pbp_lock_max_tokens,
            score=o.pbp_score_max_tokens,
            rank=o.pbp_rank_max_tokens,
        ),
    )


register_protocol("baseline", _baseline)
register_protocol("scot", _scot)
register_protocol("pbp", _pbp)
register_protocol("own", lambda s: own_protocol(s.judges))
