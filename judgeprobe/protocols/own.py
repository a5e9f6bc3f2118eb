"""Protocol ``own``: the judge audited with its own prompt and its own verdict format.

The prompt (``prompts.judge``: a prompt file, a system prompt beside it, or a messages file) is
filled from the screen slots: the item's context, the responses in screen order and the
condition's label for the response shown k-th ("" under Blind), by judgeprobe's own names
(``{CONTEXT}``, ``{RESPONSE_1}``, ``{LABEL_1}``, …) or by the prompt's own through its
``placeholders`` (which may also name item fields and conversation turns). A prompt with no
label slot still shows every cue: each label is put on the line above its response, as
``(label = …)``, the way the built-in materials show it. One request per judgment; the reply is
read by the judge's ``verdict`` rule (``VerdictFormat``; its first token's log-probabilities
under ``logprobs``, ``protocols.logprobs``) into screen terms, so every cue, control and metric
applies unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import ClassVar

from judgeprobe import JudgeprobeError
from judgeprobe.engine.settings import JudgeConfig, VerdictFormat
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
from judgeprobe.protocols.logprobs import (
    LogprobVerdict,
    probability_details,
    verdict_model,
    verdict_rule,
    verdict_spec,
)
from judgeprobe.protocols.pointwise import OwnScorer, own_scorer
from judgeprobe.protocols.readout import reply_class
from judgeprobe.protocols.replies import ScreenVerdict

#: ``map`` values (screen terms, as a config writes them) to the verdicts every protocol gives.
SCREEN: dict[str, ScreenVerdict] = {"1": "[1,2]", "2": "[2,1]", "tie": "Tie"}


class OwnReply(TextReply):
    """A judge's own reply read into a verdict (screen terms) and its explanation."""

    verdict: ScreenVerdict
    explanation: str = ""


def _token(fmt: VerdictFormat, token: str) -> ScreenVerdict:
    """The screen verdict a token names; ReplyError for a token the map does not know."""
    if token not in fmt.map:
        raise ReplyError(f"verdict {token!r} is not one of {', '.join(map(repr, fmt.map))}")
    return SCREEN[fmt.map[token]]


def own_reply_model(fmt: VerdictFormat) -> type[OwnReply]:
    """The reply model of one verdict format (one class per format: its schema is cached)."""
    return _model(verdict_spec(fmt))


@cache
def _model(spec: str) -> type[OwnReply]:
    fmt, rule = verdict_rule(spec)
    how = (
        f"as a JSON object with the key {fmt.json_key!r}"
        if fmt.json_key
        else "ending with your final verdict in exactly the requested format, given once"
    )
    one_of = {"type": "string", "enum": list(fmt.map)}
    return reply_class(OwnReply, "verdict", fmt, one_of, lambda t: _token(fmt, str(t)), rule, how)


def screen_values(prompt: JudgePrompt, p: Presentation) -> dict[str, str]:
    """What fills the prompt, by target: labels in their own slots, or above each response.

    A response shown by its conversation turns wears its label above its earliest one.
    """
    values = {
        "context": p.document,
        "response_1": p.text_1,
        "response_2": p.text_2,
        "label_1": p.label_1,
        "label_2": p.label_2,
        **dict(p.addressed),
    }
    if not prompt.labels_in_place:
        for slot, label in (("response_1", p.label_1), ("response_2", p.label_2)):
            place = prompt.first_place(slot)
            if place is not None:
                values[place] = labelled(values[place], label, inline=True)
    return values


@dataclass(frozen=True)
class OwnJudge(OwnPrompted[VerdictFormat]):
    """Protocol ``own`` for one judge: its prompt filled, its reply read by its format."""

    stage: ClassVar[str] = "verdict"

    async def run(self, p: Presentation, ask: Asker) -> Turn:
        """One request: the filled prompt; the reply's verdict is the judgment."""
        messages = self.prompt.fill(screen_values(self.prompt, p))
        model: type[OwnReply | LogprobVerdict] = (
            verdict_model(self.fmt) if self.fmt.logprobs else own_reply_model(self.fmt)
        )
        reply, raw = await ask_stage(ask, "verdict", messages, model, self.fmt.max_tokens)
        # A log-probability verdict keeps each probability (protocols.logprobs).
        details = probability_details(reply) if isinstance(reply, LogprobVerdict) else {}
        return Turn(reply.verdict, reply.explanation, [*messages, assistant(raw)], details)


def own_judge(judge: JudgeConfig, wording: int = 0) -> OwnJudge:
    """The ``own`` protocol of a judge that carries a prompt and a verdict format.

    ``wording`` k ≥ 1: its prompt's k-th paraphrase (the judge's ``wordings``) in its place.
    """
    prompt = judge.judge_prompt
    if prompt is None or judge.verdict is None:
        raise JudgeprobeError(f"judge {judge.name}: protocol own needs its prompt and verdict")
    if wording:
        prompt = judge.judge_wordings[wording - 1]
    return OwnJudge(prompt=prompt, fmt=judge.verdict)


@dataclass(frozen=True)
class Own:
    """Protocol ``own`` across the sweep's judges: each judge is judged under its own prompt."""

    judges: Mapping[str, OwnJudge | OwnScorer]
    name: str = "own"
    templates: tuple[str, ...] = ()
    stages: int = 1
    budgets: Mapping[str, int] = field(default_factory=dict)
    # each judge's paraphrases of its prompt (wording 1, 2, …; ``JudgeConfig.wordings``)
    worded: Mapping[str, tuple[OwnJudge | OwnScorer, ...]] = field(default_factory=dict)

    def for_judge(self, name: str, wording: int = 0) -> OwnJudge | OwnScorer:
        """The protocol a job of judge ``name`` runs under its prompt's ``wording`` (0: itself).

        An ``OwnScorer`` for a pointwise judge.
        """
        return self.worded[name][wording - 1] if wording else self.judges[name]

    async def run(self, p: Presentation, ask: Asker) -> Turn:
        """Never run as such: every job runs its judge's ``OwnJudge`` (``for_judge``)."""
        raise TypeError("protocol own runs per judge: plan jobs with Own.for_judge")


def own_protocol(judges: Sequence[JudgeConfig]) -> Own:
    """Protocol ``own`` for every judge; their budgets by judge under ``stage@judge``."""
    by_judge = {j.name: own_scorer(j) if j.pointwise else own_judge(j) for j in judges}
    budgets = {f"{next(iter(p.budgets))}@{n}": p.fmt.max_tokens for n, p in by_judge.items()}
    worded = {j.name: tuple(own_scorer(j, k) if j.pointwise else own_judge(j, k)
                            for k in range(1, len(j.wordings) + 1))
              for j in judges}  # fmt: skip
    return Own(judges=by_judge, budgets=budgets, worded=worded)
