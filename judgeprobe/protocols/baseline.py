"""Baseline: a direct verdict with a brief post-hoc explanation (paper, V-C)."""

from __future__ import annotations

from dataclasses import dataclass

from judgeprobe.prompts import load_template
from judgeprobe.protocols.base import Asker, Presentation, Turn, ask_stage, assistant, user
from judgeprobe.protocols.replies import PairwiseReply


@dataclass(frozen=True)
class Baseline:
    name: str = "baseline"
    templates: tuple[str, ...] = ("baseline_v1", "materials_v1")
    stages: int = 1
    max_tokens: int = 320

    async def run(self, p: Presentation, ask: Asker) -> Turn:
        prompt = load_template("baseline_v1").fill({"MATERIALS": p.materials()})
        messages = [user(prompt)]
        reply, raw = await ask_stage(ask, "verdict", messages, PairwiseReply, self.max_tokens)
        return Turn(reply["verdict"], reply["explanation"], [*messages, assistant(raw)])
