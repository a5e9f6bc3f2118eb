"""A pointwise judge under protocol ``own``: each response scored alone, the verdict by code.

The judge's prompt is filled once per response, ``{CONTEXT}`` the item's context,
``{RESPONSE}`` the response and ``{LABEL}`` the condition's label for it ("" under Blind; with
no ``{LABEL}`` the label sits on the line above the response, as under pairwise ``own``). Two
requests per judgment, each its own request key (its messages hold the filled prompt, its
reading rule the score format and the prompt's hash), cached and resumed by the store like
every request. The reply is read by the judge's ``score`` rule (``ScoreFormat``): the last
match counts, two different scores are ambiguous, a score outside [min, max] or no score at
all is re-asked and then Invalid with its reason. The verdict is derived: the higher score
wins, equal scores are a Tie, and an Invalid score makes the judgment Invalid, so every
pairwise metric applies; the raw scores go into the judgments table (``score_1``/``score_2``)
for the score shift (``metrics.units.score_units``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import ClassVar

import orjson

from judgeprobe import JudgeprobeError
from judgeprobe.engine.settings import JudgeConfig, ScoreFormat
from judgeprobe.engine.validate import ReplyError, TextReply
from judgeprobe.prompts import Template
from judgeprobe.protocols.base import (
    Asker,
    OwnPrompted,
    Presentation,
    Turn,
    ask_stage,
    assistant,
    labelled,
    user,
)
from judgeprobe.protocols.logprobs import LogprobScore, score_model
from judgeprobe.protocols.readout import reply_class
from judgeprobe.protocols.replies import ScreenVerdict

STAGES = ("score of the response shown first", "score of the response shown second")
"""Each request's stage, as an Invalid judgment's reason names the one that failed."""


class PointwiseReply(TextReply):
    """A pointwise judge's reply read into its score and its explanation."""

    score: float
    explanation: str = ""


def _number(fmt: ScoreFormat, token: object) -> float:
    """The score a token names, in [min, max]; ReplyError for anything else."""
    if isinstance(token, bool) or not isinstance(token, int | float | str):
        raise ReplyError(f"score {token!r} is not a number")
    try:
        value = float(token)
    except ValueError:
        raise ReplyError(f"score {token!r} is not a number") from None
    shown = str(token) if len(str(token)) <= 24 else f"{str(token)[:20]}…"
    if not math.isfinite(value) or not fmt.min <= value <= fmt.max:
        raise ReplyError(f"score {shown} is out of range {fmt.min:g}–{fmt.max:g}")
    return value


def score_reply_model(fmt: ScoreFormat, prompt_sha256: str) -> type[PointwiseReply]:
    """The reply model of one score format and prompt (its reading rule is in every key)."""
    spec = orjson.dumps(fmt.model_dump(by_alias=True), option=orjson.OPT_SORT_KEYS).decode()
    return _model(spec, prompt_sha256)


@cache
def _model(spec: str, prompt_sha256: str) -> type[PointwiseReply]:
    fmt = ScoreFormat.model_validate(orjson.loads(spec))
    rule = {
        "title": "own_score",
        "x-score": fmt.model_dump(by_alias=True, exclude={"max_tokens"}),
        "x-prompt": prompt_sha256,
    }
    scale = f"from {fmt.min:g} to {fmt.max:g}"
    how = (
        f"as a JSON object with the key {fmt.json_key!r} holding one score {scale}"
        if fmt.json_key
        else f"ending with your one score {scale}, in exactly the requested format, given once"
    )
    number = {"type": "number", "minimum": fmt.min, "maximum": fmt.max}
    return reply_class(PointwiseReply, "score", fmt, number, lambda t: _number(fmt, t), rule, how)


def score_values(template: Template, document: str, text: str, label: str) -> dict[str, str]:
    """What fills one request's placeholders: the label in its place, or above the response."""
    return {
        "CONTEXT": document,
        "RESPONSE": labelled(text, label, inline="LABEL" not in template.placeholders),
        "LABEL": label,
    }


def derived(score_1: float, score_2: float) -> ScreenVerdict:
    """The verdict two scores imply, in screen terms: the higher wins, equal is a Tie."""
    if score_1 > score_2:
        return "[1,2]"
    if score_2 > score_1:
        return "[2,1]"
    return "Tie"


@dataclass(frozen=True)
class OwnScorer(OwnPrompted[ScoreFormat]):
    """Protocol ``own`` for a pointwise judge: each response scored alone by its own prompt."""

    stages: int = 2  # one request per response
    stage: ClassVar[str] = "score"

    async def run(self, p: Presentation, ask: Asker) -> Turn:
        """Two requests, one per response; the verdict is derived from the two scores."""
        model: type[PointwiseReply | LogprobScore] = (
            score_model(self.fmt, self.prompt_sha256)  # Σ s·p(s) (protocols.logprobs)
            if self.fmt.logprobs
            else score_reply_model(self.fmt, self.prompt_sha256)
        )
        shown = ((p.text_1, p.label_1), (p.text_2, p.label_2))
        scores: list[float] = []
        explanations: list[str] = []
        conversation: list[dict[str, str]] = []
        for stage, (text, label) in zip(STAGES, shown, strict=True):
            messages = [user(self.prompt.fill(score_values(self.prompt, p.document, text, label)))]
            reply, raw = await ask_stage(ask, stage, messages, model, self.fmt.max_tokens)
            scores.append(reply.score)
            explanations.append(reply.explanation)
            conversation += [*messages, assistant(raw)]
        explanation = "\n\n".join(
            f"{which} ({score:g}): {text}".rstrip()
            for which, score, text in zip(("First", "Second"), scores, explanations, strict=True)
        )
        # Each score by its response, in candidate terms once the job renames summary_k.
        point = {"summary_1": scores[0], "summary_2": scores[1]}
        details = {"pointwise": point | {"min": self.fmt.min, "max": self.fmt.max}}
        # Both conversations, one after the other: no second turn continues them (own has none).
        return Turn(derived(*scores), explanation, conversation, details)


def own_scorer(judge: JudgeConfig, wording: int = 0) -> OwnScorer:
    """The ``own`` protocol of a pointwise judge (``kind = "score"``).

    ``wording`` k ≥ 1: its prompt's k-th paraphrase (the judge's ``wordings``) in its place.
    """
    prompt = judge.own_wordings[wording - 1] if wording else judge.own_prompt
    if prompt is None or judge.score is None:
        raise JudgeprobeError(f"judge {judge.name}: a pointwise judge needs its prompt and score")
    return OwnScorer(prompt=prompt, fmt=judge.score)
