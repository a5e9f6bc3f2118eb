"""A pointwise judge under protocol ``own``: each response scored alone, the verdict by code.

The judge's prompt (``prompts.judge``) is filled once per response from its screen slots: the
item's context, the response and the condition's label for it ("" under Blind; with no label
slot the label sits on the line above the response, as under pairwise ``own``), by
``{CONTEXT}``, ``{RESPONSE}``, ``{LABEL}`` or by the prompt's own ``placeholders``. Two
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

from judgeprobe import JudgeprobeError
from judgeprobe.engine.settings import JudgeConfig, ScoreFormat
from judgeprobe.engine.validate import ReplyError, TextReply
from judgeprobe.prompts.judge import JudgePrompt
from judgeprobe.protocols.base import (
    Asker,
    OwnPrompted,
    Presentation,
    Turn,
    ask_stage,
    assistant,
    labelled,
)
from judgeprobe.protocols.logprobs import LogprobScore, score_model, score_rule, score_spec
from judgeprobe.protocols.readout import reply_class
from judgeprobe.protocols.replies import ScreenVerdict

STAGES = ("score of the response shown first", "score of the response shown second")
"""Each request's stage, as an Invalid judgment's reason names the one that failed."""


class PointwiseReply(TextReply):
    """A pointwise judge's reply read into its score and its explanation."""

    score: float
    explanation: str = ""


def _number(fmt: ScoreFormat, token: object) -> float:
    """The score a token names, in [min, max] (a grade: its mapped value); ReplyError else."""
    if fmt.map is not None:
        if not isinstance(token, str) or token not in fmt.map:
            known = ", ".join(map(repr, fmt.map))
            raise ReplyError(f"grade {str(token)[:24]!r} is not one of {known}")
        return fmt.map[token]
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
    return _model(score_spec(fmt), prompt_sha256)


@cache
def _model(spec: str, prompt_sha256: str) -> type[PointwiseReply]:
    fmt, rule = score_rule(spec, prompt_sha256)
    scale = f"from {fmt.min:g} to {fmt.max:g}"
    if fmt.map is not None:
        scale = f"among {', '.join(fmt.map)}"
    what = "grade" if fmt.map is not None else "score"
    how = (
        f"as a JSON object with the key {fmt.json_key!r} holding one {what} {scale}"
        if fmt.json_key
        else f"ending with your one {what} {scale}, in exactly the requested format, given once"
    )
    number: dict[str, object] = {"type": "number", "minimum": fmt.min, "maximum": fmt.max}
    if fmt.map is not None:  # a graded score's key holds one of its categories
        number = {"type": "string", "enum": list(fmt.map)}
    return reply_class(PointwiseReply, "score", fmt, number, lambda t: _number(fmt, t), rule, how)


def score_values(prompt: JudgePrompt, p: Presentation, shown: int) -> dict[str, str]:
    """What fills the request for the response shown ``shown``-th (1 or 2), by target.

    The label in its slot, or above the response (its earliest turn, for a conversation).
    """
    text, label = (p.text_1, p.label_1) if shown == 1 else (p.text_2, p.label_2)
    values = {"context": p.document, "response": text, "label": label}
    for name, value in p.addressed:  # this response's turns under the prompt's own names
        if name.endswith(f".response_{shown}"):
            values[name.removesuffix(f"_{shown}")] = value
        elif not name.endswith((".response_1", ".response_2")):
            values[name] = value
    place = None if prompt.labels_in_place else prompt.first_place("response")
    if place is not None:
        values[place] = labelled(values[place], label, inline=True)
    return values


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
        scores: list[float] = []
        explanations: list[str] = []
        conversation: list[dict[str, str]] = []
        for shown, stage in enumerate(STAGES, start=1):
            messages = self.prompt.fill(score_values(self.prompt, p, shown))
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
    prompt = judge.judge_wordings[wording - 1] if wording else judge.judge_prompt
    if prompt is None or judge.score is None:
        raise JudgeprobeError(f"judge {judge.name}: a pointwise judge needs its prompt and score")
    return OwnScorer(prompt=prompt, fmt=judge.score)
