"""SCoT: criterion-guided judging.

Notes and 0–5 scores per criterion and summary come before the verdict; the verdict the scores imply
is kept beside the stated one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel

from judgeprobe.prompts.task import CRITERIA, DEFAULT, Task
from judgeprobe.protocols.base import (
    Asker,
    Message,
    Presentation,
    Turn,
    ask_stage,
    assistant,
    user,
)
from judgeprobe.protocols.budget import stage_budgets
from judgeprobe.protocols.replies import ScotReply, criteria_replies
from judgeprobe.protocols.scoring import score_pairs, verdict_from_scores


@dataclass(frozen=True)
class SCoT:
    """Structured chain of thought: per-criterion scores, combined into the verdict by code."""

    weights: Mapping[str, float] = field(default_factory=lambda: dict.fromkeys(CRITERIA, 1.0))
    tie_tolerance: float = 0.0
    budgets: Mapping[str, int] = field(default_factory=lambda: stage_budgets(SCoT.replies_for()))
    name: str = "scot"
    templates: tuple[str, ...] = ("scot_v1", "materials_v1")  # the prompt first (wording)
    stages: int = 1
    task: Task = field(default=DEFAULT, repr=False)  # its words and criteria (``prompts.task``)

    @staticmethod
    def replies_for(task: Task = DEFAULT) -> Mapping[str, type[BaseModel]]:
        """Each stage's reply model under ``task``'s criteria."""
        return {"verdict": criteria_replies(task.criteria).scot}

    @property
    def reply(self) -> type[ScotReply]:
        """The verdict reply under the task's criteria."""
        return criteria_replies(self.task.criteria).scot

    async def run(self, p: Presentation, ask: Asker) -> Turn:
        """One request for per-criterion scores; the weighted totals decide the verdict."""
        materials = p.materials(task=self.task)
        prompt = p.template(self.templates[0], self.task).fill({"MATERIALS": materials})
        messages = [user(prompt)]
        budget = self.budgets["verdict"]
        reply, raw = await ask_stage(ask, "verdict", messages, p.reply(self.reply), budget)
        return self.turn(reply, raw, messages)

    def turn(self, reply: ScotReply, raw: str, messages: list[Message]) -> Turn:
        """A SCoT reply as a turn (its first, or Reveal-After's second), scores kept beside it.

        The verdict the scores imply goes into ``details`` next to the stated one, so the
        metrics can tell a judge whose words and numbers disagree.
        """
        scores = score_pairs(reply.criteria.by_criterion())
        details = {
            "criteria": reply.criteria.model_dump(),
            "score_verdict": verdict_from_scores(scores, self.weights, self.tie_tolerance),
            "stated_verdict": reply.verdict,
        }
        return Turn(reply.verdict, reply.explanation, [*messages, assistant(raw)], details)
