"""Reveal-After's second turn, defined for every protocol.

Turn 1 is the protocol's ordinary judgment under Flip labels. Turn 2 continues the same
conversation: it sees the same materials as turn 1 did, now with the true labels, and asks the
protocol's own question again, so a revision is the protocol's answer to the truth and not
to a different prompt.

- **baseline**: the verdict conversation continues; the reveal message restates the
  document and both summaries with their true labels and asks for a final verdict and
  explanation (``reveal_v2``).
- **scot**: likewise, and turn 2 again writes criterion notes and 0–5 scores before its
  verdict (``reveal_scot_v1``); the verdict the scores imply is kept beside the stated one.
- **pbp**: the locked notes stay locked (evidence is never rewritten after a cue). The
  *score* conversation continues with the true labels (and the texts when
  ``score_sees_texts``, as in turn 1) and re-scores from the same notes
  (``reveal_pbp_score_v1``); the final verdict is computed by code from the new scores; the
  *rank* conversation continues with the new scores for the model's own verdict and a
  one-sentence justification (``reveal_pbp_rank_v1``), which is turn 2's explanation. The
  rank stage is told that labels were corrected, never which label is whose.

Acknowledgement (docs/metrics.md) counts turn-2 explanations that mention the label change.
Words the reveal prompts supply themselves ("correction", "labels", …) cannot show that the
judge noticed anything, so ``unsupplied`` drops every lexicon phrase that occurs in any reveal
instruction; the same phrases counted on turn-1 explanations give the floor.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from judgeprobe.engine.store import Result
from judgeprobe.prompts import load_template
from judgeprobe.protocols.base import (
    Asker,
    Message,
    Presentation,
    Turn,
    ask_stage,
    assistant,
    user,
)
from judgeprobe.protocols.names import NUMBERS, Names
from judgeprobe.protocols.pbp import as_text
from judgeprobe.protocols.replies import PairwiseReply, RankReply, named
from judgeprobe.protocols.scoring import score_pairs, verdict_from_scores
from judgeprobe.protocols.scot import SCoT

#: The templates each protocol's turn 2 adds to its own (the materials template it has).
TEMPLATES: dict[str, tuple[str, ...]] = {
    "baseline": ("reveal_v2",),
    "scot": ("reveal_scot_v1",),
    "pbp": ("reveal_pbp_score_v1", "reveal_pbp_rank_v1"),
    "own": (),  # a judge's own prompt has no second turn (judgeprobe.protocols.own)
}


def reveal_templates(protocol: str) -> tuple[str, ...]:
    """The Reveal-After templates a protocol adds, hashed into the manifest (none: not listed)."""
    return TEMPLATES.get(protocol, ())


def reveal_stages(protocol: str) -> int:
    """Requests turn 2 adds to a judgment."""
    return len(reveal_templates(protocol))


def unsupplied(phrases: Iterable[str]) -> tuple[str, ...]:
    """The acknowledgement phrases that no reveal instruction contains (case-insensitive)."""
    supplied = " ".join(load_template(t).text.lower() for ts in TEMPLATES.values() for t in ts)
    return tuple(p for p in phrases if p.lower() not in supplied)


@dataclass(frozen=True, slots=True)
class Call:
    """One stage request of turn 1 and its stored result."""

    messages: list[Message]
    reply_model: type[BaseModel]
    result: Result


@dataclass(slots=True)
class Recorder:
    """An asker that remembers turn 1's calls, so turn 2 can continue their conversations."""

    ask: Asker
    calls: list[Call] = field(default_factory=list)

    async def __call__(
        self, messages: Sequence[Message], reply_model: type[BaseModel], max_tokens: int
    ) -> Result:
        """Ask as the wrapped asker does, keeping each call so the conversation can be continued."""
        result = await self.ask(messages, reply_model, max_tokens)
        self.calls.append(Call(list(messages), reply_model, result))
        return result

    def conversation(self, model: type[BaseModel]) -> list[Message]:
        """The last call answered with ``model``: its messages and the reply as given."""
        call = next(c for c in reversed(self.calls) if c.reply_model is model)
        return [*call.messages, assistant(call.result.raw)]


async def reveal(
    protocol: Any, first: Turn, turn1: Recorder, truth: Presentation, ask: Asker
) -> Turn:
    """Turn 2 of ``protocol`` after ``first``.

    ``truth`` is turn 1's presentation with the true labels. Raises StageFailed like any stage.
    """
    task, (n1, n2) = protocol.task, truth.names
    if protocol.name == "pbp":
        noun = task.response.capitalize()
        labels = f"{noun} {n1} (label = {truth.label_1})\n{noun} {n2} (label = {truth.label_2})"
        shown = truth.materials(task=task) if protocol.score_sees_texts else labels
        note = truth.template("reveal_pbp_score_v1", task).fill({"MATERIALS": shown})
        return await second_turn(protocol, first, turn1, note, "reveal_pbp_rank_v1", ask,
                                 names=truth.names)  # fmt: skip
    materials = truth.materials(task=task)
    prompt = truth.template(TEMPLATES[protocol.name][0], task).fill({"MATERIALS": materials})
    return await second_turn(protocol, first, turn1, prompt, "", ask, names=truth.names)


async def second_turn(protocol: Any, first: Turn, turn1: Recorder, prompt: str, rank: str,
                      ask: Asker, stage: str = "reveal",
                      names: Names = NUMBERS) -> Turn:  # fmt: skip
    """Turn 2 of ``protocol``: ``prompt`` continues turn 1's conversation, the protocol's question.

    Baseline and SCoT continue the verdict conversation; PBP continues the *score* conversation
    with ``prompt`` (re-scoring from the locked notes), computes the verdict from the new scores,
    and continues the *rank* conversation with template ``rank`` for the model's own verdict.
    Reveal-After's turn and the pressure conditions' (``protocols.pressure``) are both this one;
    ``stage`` names its stages in an Invalid reason; ``names`` are turn 1's screen names, which
    turn 2's templates and reply schemas keep. Raises StageFailed like any stage.
    """
    budgets = protocol.budgets
    if protocol.name == "pbp":
        return await _pbp(protocol, first, turn1, prompt, rank, ask, stage, names)
    messages = [*first.messages, user(prompt)]
    if protocol.name == "baseline":
        model = named(PairwiseReply, names)
        said, raw = await ask_stage(ask, stage, messages, model, budgets["reveal"])
        return Turn(said.verdict, said.explanation, [*messages, assistant(raw)])
    scot: SCoT = protocol
    model = named(scot.reply, names)
    reply, raw = await ask_stage(ask, stage, messages, model, budgets["verdict"])
    return scot.turn(reply, raw, messages)


async def _pbp(protocol: Any, first: Turn, turn1: Recorder, note: str, rank_template: str,
               ask: Asker, stage: str, names: Names) -> Turn:  # fmt: skip
    budgets = protocol.budgets
    scored_by, rank_model = named(protocol.keyed.score, names), named(RankReply, names)
    score_msgs = [*turn1.conversation(scored_by), user(note)]
    scores, _ = await ask_stage(ask, f"{stage} score", score_msgs, scored_by, budgets["score"])
    pairs = score_pairs(scores.by_criterion())
    computed = verdict_from_scores(pairs, protocol.weights, protocol.tie_tolerance)
    scored = scores.model_dump()

    shown = as_text(scores.model_dump(by_alias=True))
    rank_note = load_template(rank_template, protocol.task, names).fill({"SCORES": shown})
    rank_msgs = [*turn1.conversation(rank_model), user(rank_note)]
    rank, raw = await ask_stage(ask, f"{stage} rank", rank_msgs, rank_model, budgets["rank"])
    details = {
        "notes": first.details["notes"],  # locked in turn 1, never rewritten
        "scores": scored,
        "score_verdict": computed,
        "stated_verdict": rank.verdict,
    }
    return Turn(computed, rank.justification, [*rank_msgs, assistant(raw)], details)
