"""Verdicts and scores read from the log-probabilities of the reply's first token.

A judge such as AlpacaEval 2's weighted evaluator answers one token (``m``: the response shown
first, ``M``: the second) and is read by the probability it gives each, not by the token it
happens to emit. The request asks for the first token's top log-probabilities
(``engine.wire.logprob_fields``); the reply is read here (docs/metrics.md, "Probability
verdicts"):

- each mapped token's probability is summed over the returned tokens equal to it once
  surrounding whitespace is stripped (``m`` and `` m`` are one answer);
- P(k) = p(k) / Σ p over the mapped verdicts (1, 2 and tie when mapped); a mapped token that
  is not among the returned ones has probability below all of them and counts as 0;
- the verdict is the most probable one (equal: Tie); no mapped token among the returned ones
  is Invalid with that reason, never re-asked (a re-ask would change what is audited);
- a pointwise score is Σ s·p(s) over the score tokens, renormalised over them (G-Eval).

A one-token reply that stops at its budget is what was asked for, not a truncation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from typing import Any, ClassVar

import orjson

from judgeprobe.engine.settings import ScoreFormat, VerdictFormat
from judgeprobe.engine.validate import ReplyError, TokenReply, TopTokens
from judgeprobe.protocols.replies import ScreenVerdict

#: A verdict map's values (screen terms) to the verdicts every protocol gives.
SCREEN: dict[str, ScreenVerdict] = {"1": "[1,2]", "2": "[2,1]", "tie": "Tie"}


def token_mass(top: TopTokens | None, tokens: Mapping[str, str]) -> dict[str, float]:
    """The probability each value of ``tokens`` (token → value) gets among ``top``.

    Returned tokens equal to a mapped one once whitespace is stripped are summed; a value none
    of whose tokens was returned is absent. ReplyError (final) when the server returned no
    log-probabilities, or none of the mapped tokens.
    """
    if top is None:
        raise ReplyError("no log-probabilities in the reply", final=True)
    by_token = {t.strip(): v for t, v in tokens.items()}
    mass: dict[str, float] = {}
    for token, logprob in top:
        value = by_token.get(token.strip())
        if value is not None and math.isfinite(logprob):
            mass[value] = mass.get(value, 0.0) + math.exp(logprob)
    if not mass:
        shown = ", ".join(map(repr, tokens))
        raise ReplyError(
            f"none of the tokens {shown} among the {len(top)} most probable first tokens",
            final=True,
        )
    return mass


class LogprobVerdict(TokenReply):
    """A verdict read from log-probabilities: the verdict (screen terms) and each probability.

    ``prob_1``/``prob_2``: P(the response shown first / second wins); ``prob_tie``: P(Tie),
    None when the judge has no tie token. ``explanation``: the token the judge emitted.
    """

    verdict: ScreenVerdict
    explanation: str = ""
    prob_1: float
    prob_2: float
    prob_tie: float | None = None


def read_verdict(fmt: VerdictFormat, top: TopTokens | None, text: str) -> dict[str, Any]:
    """The fields of a ``LogprobVerdict`` from the first token's top log-probabilities."""
    mass = token_mass(top, fmt.logprobs)
    total = sum(mass.values())
    probs = {k: mass.get(k, 0.0) / total for k in ("1", "2", "tie")}
    best = max(probs.values())
    winners = [k for k, p in probs.items() if p == best]
    verdict = SCREEN[winners[0]] if len(winners) == 1 else "Tie"
    has_tie = "tie" in fmt.logprobs.values()
    return {
        "verdict": verdict,
        "explanation": text.strip(),
        "prob_1": probs["1"],
        "prob_2": probs["2"],
        "prob_tie": probs["tie"] if has_tie else None,
    }


def verdict_spec(fmt: VerdictFormat) -> str:
    """A verdict format as one sorted JSON text: the cache key of its reply model classes."""
    return orjson.dumps(fmt.model_dump(), option=orjson.OPT_SORT_KEYS).decode()


def verdict_rule(spec: str) -> tuple[VerdictFormat, dict[str, Any]]:
    """The format of ``spec`` and its reading rule as every request key holds it.

    One definition for the text and the log-probability verdict replies (as ``score_rule``).
    """
    fmt = VerdictFormat.model_validate(orjson.loads(spec))
    return fmt, {"title": "own_verdict", "x-verdict": fmt.model_dump(exclude={"max_tokens"})}


def verdict_model(fmt: VerdictFormat) -> type[LogprobVerdict]:
    """The reply model of one log-probability verdict format (one class per format)."""
    return _verdict_model(verdict_spec(fmt))


@cache
def _verdict_model(spec: str) -> type[LogprobVerdict]:
    fmt, rule = verdict_rule(spec)

    class Reply(LogprobVerdict):
        key_schema: ClassVar[dict[str, Any]] = rule

        @classmethod
        def from_logprobs(cls, top: TopTokens | None, text: str) -> LogprobVerdict:
            return cls(**read_verdict(fmt, top, text))

    return Reply


def probability_details(reply: LogprobVerdict) -> dict[str, Any]:
    """A judgment's probabilities under ``details`` (renamed into candidate terms by the job)."""
    point: dict[str, Any] = {"summary_1": reply.prob_1, "summary_2": reply.prob_2}
    return {"probability": point | {"tie": reply.prob_tie}}


class LogprobScore(TokenReply):
    """A pointwise score read from log-probabilities: Σ s·p(s), and the token emitted."""

    score: float
    explanation: str = ""


def weighted_score(fmt: ScoreFormat, top: TopTokens | None) -> float:
    """Σ s·p(s) over the score tokens among ``top``, renormalised over them."""
    values = fmt.score_tokens
    mass = token_mass(top, {t: t for t in values})
    return sum(values[t] * p for t, p in mass.items()) / sum(mass.values())


def score_spec(fmt: ScoreFormat) -> str:
    """A score format as one sorted JSON text: the cache key of its reply model classes."""
    return orjson.dumps(fmt.model_dump(by_alias=True), option=orjson.OPT_SORT_KEYS).decode()


def score_rule(spec: str, prompt_sha256: str) -> tuple[ScoreFormat, dict[str, Any]]:
    """The format of ``spec`` and its reading rule as every request key holds it.

    One definition for the text and the log-probability score replies: a drift between them
    would move request keys.
    """
    fmt = ScoreFormat.model_validate(orjson.loads(spec))
    rule = {
        "title": "own_score",
        "x-score": fmt.model_dump(by_alias=True, exclude={"max_tokens"}),
        "x-prompt": prompt_sha256,
    }
    return fmt, rule


def score_model(fmt: ScoreFormat, prompt_sha256: str) -> type[LogprobScore]:
    """The reply model of one log-probability score format and prompt (both in every key)."""
    return _score_model(score_spec(fmt), prompt_sha256)


@cache
def _score_model(spec: str, prompt_sha256: str) -> type[LogprobScore]:
    fmt, rule = score_rule(spec, prompt_sha256)

    class Reply(LogprobScore):
        key_schema: ClassVar[dict[str, Any]] = rule

        @classmethod
        def from_logprobs(cls, top: TopTokens | None, text: str) -> LogprobScore:
            return cls(score=weighted_score(fmt, top), explanation=text.strip())

    return Reply
