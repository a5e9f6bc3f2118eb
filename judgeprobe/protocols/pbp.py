"""Proof-Before-Preference: three separate requests, each seeing only what it may.

1. *lock*: criterion-wise notes per summary with quoted spans; no scores, no verdict. The
   notes and quotes are bounded (``pbp_lock_v3`` states the bounds in words, the schema in
   characters and items), so the reply fits a budget sized from its schema. Its output line
   describes the keys in words: tiny judges copied v2's example value "exact span" as
   their quotes.
2. *score*: 0–5 per criterion and summary from the locked notes (the texts and labels are
   shown again only when ``score_sees_texts``; the paper's template shows them).
3. *rank*: the verdict is computed by code from the aggregated scores; the model gives its
   own verdict and a one-sentence justification, and a disagreement is flagged.

Every quote is verified against the document and both summaries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import BaseModel

from judgeprobe.prompts.task import CRITERIA, DEFAULT, Task
from judgeprobe.protocols.base import Asker, Presentation, Turn, ask_stage, assistant, user
from judgeprobe.protocols.budget import stage_budgets
from judgeprobe.protocols.quotes import verify_quote
from judgeprobe.protocols.replies import (
    CriteriaReplies,
    LockedCriterion,
    RankReply,
    criteria_replies,
)
from judgeprobe.protocols.scoring import score_pairs, verdict_from_scores

LOCK_TEMPLATE = "pbp_lock_v3"


def as_text(data: object) -> str:
    """Deterministic JSON for notes and scores shown to a later stage."""
    return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()


@dataclass(frozen=True)
class PBP:
    """Proof-before-preference: evidence is locked with quotes before any score or verdict."""

    weights: Mapping[str, float] = field(default_factory=lambda: dict.fromkeys(CRITERIA, 1.0))
    tie_tolerance: float = 0.0
    score_sees_texts: bool = True
    budgets: Mapping[str, int] = field(default_factory=lambda: stage_budgets(PBP.replies_for()))
    name: str = "pbp"
    # lock, score, rank, then the materials (``protocols.wording`` rewords the first three)
    templates: tuple[str, ...] = (LOCK_TEMPLATE, "pbp_score_v1", "pbp_rank_v1", "materials_v1")
    stages: int = 3
    task: Task = field(default=DEFAULT, repr=False)  # its words and criteria (``prompts.task``)

    @staticmethod
    def replies_for(task: Task = DEFAULT) -> Mapping[str, type[BaseModel]]:
        """Each stage's reply model under ``task``'s criteria."""
        keyed = criteria_replies(task.criteria)
        return {"lock": keyed.lock, "score": keyed.score, "rank": RankReply}

    @property
    def keyed(self) -> CriteriaReplies:
        """The lock and score replies under the task's criteria."""
        return criteria_replies(self.task.criteria)

    async def run(self, p: Presentation, ask: Asker) -> Turn:
        """Lock evidence, score from it, then rank; quotes are verified and every stage cached."""
        budget, task, keyed = self.budgets, self.task, self.keyed
        lock_t, score_t, rank_t = (p.template(t, task) for t in self.templates[:3])
        shown = p.materials(task=task)
        lock_msgs = [user(lock_t.fill({"MATERIALS": shown}))]
        notes, _ = await ask_stage(ask, "lock", lock_msgs, p.reply(keyed.lock), budget["lock"])
        locked = as_text(notes.model_dump(by_alias=True))  # as the judge wrote them

        materials = shown if self.score_sees_texts else ""
        score_prompt = score_t.fill({"MATERIALS": materials, "LOCKED_NOTES": locked})
        score_msgs = [user(score_prompt)]
        score_model = p.reply(keyed.score)
        scores, _ = await ask_stage(ask, "score", score_msgs, score_model, budget["score"])
        pairs = score_pairs(scores.by_criterion())
        computed = verdict_from_scores(pairs, self.weights, self.tie_tolerance)
        scored = scores.model_dump()

        shown_scores = as_text(scores.model_dump(by_alias=True))  # as the judge wrote them
        rank_prompt = rank_t.fill({"LOCKED_NOTES": locked, "SCORES": shown_scores})
        rank_msgs = [user(rank_prompt)]
        rank, raw = await ask_stage(ask, "rank", rank_msgs, p.reply(RankReply), budget["rank"])

        # A quote found as well in a summary as in the document is the summary's (the first best
        # match wins): evidence about a candidate, even where the candidate copies the document.
        sources = {"summary_1": p.text_1, "summary_2": p.text_2, "document": p.document}
        checked = {c: _checked(locked, sources) for c, locked in notes.by_criterion().items()}
        details = {
            "notes": checked,
            "scores": scored,
            "score_verdict": computed,
            "stated_verdict": rank.verdict,
        }
        return Turn(computed, rank.justification, [*rank_msgs, assistant(raw)], details)


def _checked(locked: LockedCriterion, sources: dict[str, str]) -> dict[str, Any]:
    """One criterion's locked notes on both summaries, each quote verified against the texts."""
    return {
        side: {"note": e.note, "quotes": [verify_quote(q, sources) for q in e.quotes]}
        for side, e in (("summary_1", locked.summary_1), ("summary_2", locked.summary_2))
    }
