"""Baseline: a direct verdict with a brief post-hoc explanation (paper, V-C)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from pydantic import BaseModel

from judgeprobe.prompts.task import DEFAULT, Task
from judgeprobe.protocols.base import Asker, Presentation, Turn, ask_stage, assistant, user
from judgeprobe.protocols.budget import stage_budgets
from judgeprobe.protocols.replies import PairwiseReply


@dataclass(frozen=True)
class Baseline:
    """The paper's baseline: one request asks for a verdict and its explanation."""

    replies: ClassVar[Mapping[str, type[BaseModel]]] = {
        "verdict": PairwiseReply,
        "reveal": PairwiseReply,
    }
    budgets: Mapping[str, int] = field(default_factory=lambda: stage_budgets(Baseline.replies))
    name: str = "baseline"
    templates: tuple[str, ...] = ("baseline_v1", "materials_v1")  # the prompt first (wording)
    stages: int = 1
    # The task's words (the judgment key holds them through the templates' hash).
    task: Task = field(default=DEFAULT, repr=False)

    async def run(self, p: Presentation, ask: Asker) -> Turn:
        """One request; the reply's verdict is the judgment."""
        materials = p.materials(task=self.task)
        prompt = p.template(self.templates[0], self.task).fill({"MATERIALS": materials})
        messages = [user(prompt)]
        budget = self.budgets["verdict"]
        reply, raw = await ask_stage(ask, "verdict", messages, p.reply(PairwiseReply), budget)
        return Turn(reply.verdict, reply.explanation, [*messages, assistant(raw)])
