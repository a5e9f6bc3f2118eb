"""SCoT: criterion-guided judging. Notes and 0–5 scores per criterion and summary come
before the verdict; the verdict the scores imply is kept beside the stated one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from judgeprobe.prompts import load_template
from judgeprobe.protocols.base import Asker, Presentation, Turn, ask_stage, assistant, user
from judgeprobe.protocols.replies import CRITERIA, ScotReply
from judgeprobe.protocols.scoring import verdict_from_scores


@dataclass(frozen=True)
class SCoT:
    weights: Mapping[str, float] = field(default_factory=lambda: dict.fromkeys(CRITERIA, 1.0))
    tie_tolerance: float = 0.0
    max_tokens: int = 900
    name: str = "scot"
    templates: tuple[str, ...] = ("scot_v1", "materials_v1")
    stages: int = 1

    async def run(self, p: Presentation, ask: Asker) -> Turn:
        prompt = load_template("scot_v1").fill({"MATERIALS": p.materials()})
        messages = [user(prompt)]
        reply, raw = await ask_stage(ask, "verdict", messages, ScotReply, self.max_tokens)
        criteria = reply["criteria"]
        scores = {c: (criteria[c]["summary_1"], criteria[c]["summary_2"]) for c in CRITERIA}
        details = {
            "criteria": criteria,
            "score_verdict": verdict_from_scores(scores, self.weights, self.tie_tolerance),
            "stated_verdict": reply["verdict"],
        }
        return Turn(reply["verdict"], reply["explanation"], [*messages, assistant(raw)], details)
