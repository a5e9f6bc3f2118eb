"""Rubric judging through the engine: a binary satisfied/violated verdict per (item, variant).

One ``RubricJob`` is one judgment. Its requests (an LLM rewrite when the variant's text is
generated, then the verdict) go through ``CachedAsker``, so every request is stored in the
run's SQLite store and a rerun with ``--resume`` only sends what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judgeprobe.core.files import content_hash
from judgeprobe.core.records import INVALID
from judgeprobe.engine.cached import CachedAsker
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.request import Message, Sampling
from judgeprobe.engine.store import Outcome, Result, Store
from judgeprobe.prompts import load_template
from judgeprobe.rubric.data import RubricItem
from judgeprobe.rubric.perturb import (
    REWRITE_MAX_TOKENS,
    REWRITE_TEMPLATES,
    RewriteReply,
    Source,
    Variant,
    negate_rule,
    provided,
)

JUDGE_TEMPLATE = "rubric_judge_v1"

#: Named decoding presets: the paper's (Table 1, seeded) and a deterministic one.
PRESETS: dict[str, Sampling] = {
    "deterministic": Sampling(temperature=0.0, top_p=1.0),
    "paper": Sampling(temperature=1.0, top_p=0.95, repetition_penalty=1.15),
}


EXPLANATION_MAX_CHARS = 240


class RubricReply(BaseModel):
    """The judge's answer for one criterion (HealthBench's grader fields, explanation first).

    The explanation's length is capped in the schema, so a grammar-constrained server cannot
    spend hundreds of tokens on it (small judges tend to echo the conversation).
    """

    model_config = ConfigDict(extra="forbid", title="rubric_verdict")

    explanation: str = Field(min_length=1, max_length=EXPLANATION_MAX_CHARS)
    criteria_met: bool


def conversation_text(item: RubricItem) -> str:
    """An item's conversation as plain text for the judge's prompt."""
    return "\n\n".join(f"{m.role}: {m.content}" for m in item.conversation)


@dataclass(frozen=True, slots=True)
class RubricJob:
    """One judgment of the rubric sweep (routable by ``run_jobs``)."""

    key: str
    judge: str
    item: RubricItem
    variant: Variant
    source: Source | None  # None for the original pair
    seed: int


def job_key(
    judge: str,
    item: RubricItem,
    variant: str,
    source: str | None,
    seed: int,
    sampling: Sampling,
    max_tokens: int,
) -> str:
    """Everything that decides the judgment, item content and template text included."""
    templates = [JUDGE_TEMPLATE, *([REWRITE_TEMPLATES[variant]] if source == "llm" else [])]
    body = {
        "judge": judge,
        "item": item.model_dump(exclude={"judge_label"}),
        "variant": variant,
        "source": source,
        "seed": seed,
        "sampling": sampling.model_dump(),
        "max_tokens": max_tokens,
        "templates": [load_template(t).sha256 for t in templates],
    }
    return content_hash(body)


def _prompt(template: str, item: RubricItem, response: str, criterion: str) -> list[Message]:
    """One user message: the template filled with the conversation, response and criterion."""
    text = load_template(template).fill(
        {"CONVERSATION": conversation_text(item), "RESPONSE": response, "CRITERION": criterion}
    )
    return [{"role": "user", "content": text}]


class RewriteFailed(Exception):
    """A rewrite that ended Invalid, so the judgment that needs it ends Invalid too."""

    def __init__(self, result: Result) -> None:
        super().__init__(result.invalid_reason)
        self.result = result


async def _texts(job: RubricJob, ask: CachedAsker) -> tuple[str, str, str]:
    """(response, criterion, the counterfactual text used) for the job's variant."""
    item, variant = job.item, job.variant
    if variant == "original" or job.source is None:
        return item.response, item.criterion, ""
    if job.source == "provided":
        text = provided(item, variant)
    elif job.source == "rule":
        text = negate_rule(item.criterion)
    else:
        prompt = _prompt(REWRITE_TEMPLATES[variant], item, item.response, item.criterion)
        result = await ask(prompt, RewriteReply, REWRITE_MAX_TOKENS[variant])
        rewrite = result.reply_as(RewriteReply)
        if rewrite is None:
            raise RewriteFailed(result)
        text = rewrite.text
    if variant == "reversed_response":
        return text, item.criterion, text
    return item.response, text, text


async def run_rubric_job(
    job: RubricJob, endpoint: Endpoint, store: Store, sampling: Sampling, max_tokens: int
) -> Outcome:
    """Make one rubric judgment (every request cached in ``store``)."""
    ask = CachedAsker(endpoint, store, sampling, job.seed)
    details: dict[str, Any] = {}
    try:
        response, criterion, counterfactual = await _texts(job, ask)
        details = {"criterion": criterion, "counterfactual": counterfactual}
        prompt = _prompt(JUDGE_TEMPLATE, job.item, response, criterion)
        result = await ask(prompt, RubricReply, max_tokens)
    except RewriteFailed as exc:
        result, details = exc.result, {"stage": "rewrite"}  # an Invalid result: no reply
    stats: dict[str, Any] = {
        "key": job.key,
        **ask.totals(),
        "model": endpoint.info.model,
        "details": details,
    }
    reply = result.reply_as(RubricReply)
    if reply is None:
        return Outcome(
            status="invalid",
            verdict=INVALID,
            explanation=result.raw,
            invalid_reason=result.invalid_reason,
            retryable=result.retryable,
            **stats,
        )
    return Outcome(
        status="valid",
        verdict="satisfied" if reply.criteria_met else "violated",
        raw_verdict=str(reply.criteria_met).lower(),
        explanation=reply.explanation,
        **stats,
    )
