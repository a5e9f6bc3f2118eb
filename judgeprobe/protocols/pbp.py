"""Proof-Before-Preference: three separate requests, each seeing only what it may.

1. *lock*: criterion-wise notes per summary with quoted spans; no scores, no verdict.
2. *score*: 0–5 per criterion and summary from the locked notes (the texts and labels are
   shown again only when ``score_sees_texts``; the paper's template shows them).
3. *rank*: the verdict is computed by code from the aggregated scores; the model gives its
   own verdict and a one-sentence justification, and a disagreement is flagged.

Every quote is verified against the document and both summaries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import orjson

from judgeprobe.prompts import load_template
from judgeprobe.protocols.base import Asker, Presentation, Turn, ask_stage, assistant, user
from judgeprobe.protocols.quotes import verify_quote
from judgeprobe.protocols.replies import CRITERIA, LockReply, RankReply, ScoreReply
from judgeprobe.protocols.scoring import verdict_from_scores


def as_text(data: object) -> str:
    """Deterministic JSON for notes and scores shown to a later stage."""
    return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()


@dataclass(frozen=True)
class PBP:
    weights: Mapping[str, float] = field(default_factory=lambda: dict.fromkeys(CRITERIA, 1.0))
    tie_tolerance: float = 0.0
    score_sees_texts: bool = True
    max_tokens_lock: int = 900
    max_tokens_score: int = 200
    max_tokens_rank: int = 200
    name: str = "pbp"
    templates: tuple[str, ...] = ("pbp_lock_v1", "pbp_score_v1", "pbp_rank_v1", "materials_v1")
    stages: int = 3

    async def run(self, p: Presentation, ask: Asker) -> Turn:
        lock_msgs = [user(load_template("pbp_lock_v1").fill({"MATERIALS": p.materials()}))]
        notes, _ = await ask_stage(ask, "lock", lock_msgs, LockReply, self.max_tokens_lock)
        locked = as_text(notes)

        materials = p.materials() if self.score_sees_texts else ""
        score_prompt = load_template("pbp_score_v1").fill(
            {"MATERIALS": materials, "LOCKED_NOTES": locked}
        )
        score_msgs = [user(score_prompt)]
        scores, _ = await ask_stage(ask, "score", score_msgs, ScoreReply, self.max_tokens_score)
        pairs = {c: (scores[c]["summary_1"], scores[c]["summary_2"]) for c in CRITERIA}
        computed = verdict_from_scores(pairs, self.weights, self.tie_tolerance)

        rank_prompt = load_template("pbp_rank_v1").fill(
            {"LOCKED_NOTES": locked, "SCORES": as_text(scores)}
        )
        rank_msgs = [user(rank_prompt)]
        rank, raw = await ask_stage(ask, "rank", rank_msgs, RankReply, self.max_tokens_rank)

        sources = {"document": p.document, "summary_1": p.text_1, "summary_2": p.text_2}
        checked = {
            c: {
                side: {
                    "note": notes[c][side]["note"],
                    "quotes": [verify_quote(q, sources) for q in notes[c][side]["quotes"]],
                }
                for side in ("summary_1", "summary_2")
            }
            for c in CRITERIA
        }
        details = {
            "notes": checked,
            "scores": scores,
            "score_verdict": computed,
            "stated_verdict": rank["verdict"],
        }
        return Turn(computed, rank["justification"], [*rank_msgs, assistant(raw)], details)
