"""Judge protocols: how the judge is made to reason before its verdict.

``baseline`` (direct verdict), ``scot`` (criterion-guided notes and scores, then verdict) and
``pbp`` (proof-before-preference: lock quoted evidence, score from it, rank by code), and
``own`` (each judge under its own prompt). A protocol is a small class with
``run(presentation, ask) -> Turn``; adding one is one file for the class and one
``register_protocol`` call (``protocols.registry``), which makes its name valid in a sweep
config, builds it for the plan and orders it in comparisons (docs/development.md, "Adding a
protocol").
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Protocol as TypingProtocol

from judgeprobe.prompts import load_template
from judgeprobe.prompts.task import DEFAULT, Task
from judgeprobe.protocols.base import Asker, Presentation, Turn
from judgeprobe.protocols.baseline import Baseline
from judgeprobe.protocols.pbp import PBP
from judgeprobe.protocols.scot import SCoT


class JudgeProtocol(TypingProtocol):
    """What the sweep needs of a protocol."""

    @property
    def name(self) -> str:
        """The protocol's name as the config and the judgments table spell it."""

    @property
    def templates(self) -> tuple[str, ...]:
        """The prompt templates it uses, hashed into the manifest."""

    @property
    def stages(self) -> int:
        """Requests per judgment, for the plan's cost estimate."""

    @property
    def budgets(self) -> Mapping[str, int]:
        """``max_tokens`` per stage, sized from its reply schema or configured."""
        ...

    async def run(self, p: Presentation, ask: Asker) -> Turn:
        """Judge one presentation through ``ask`` (which caches every stage) into a verdict."""


def templates_hash(
    names: tuple[str, ...], task: Task = DEFAULT, screen: tuple[str, str] = ("1", "2")
) -> str:
    """One hash over the exact text of every template a protocol uses, in ``task``'s words.

    ``screen``: the screen names the templates are read under (``protocols.names``).
    """
    digest = hashlib.sha256()
    for name in sorted(names):
        digest.update(f"{name}:{load_template(name, task, screen).sha256}\n".encode())
    return digest.hexdigest()


__all__ = ["PBP", "Baseline", "JudgeProtocol", "SCoT", "templates_hash"]
