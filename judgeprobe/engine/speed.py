"""How fast a judge answers at its concurrency: the short timed probe behind the plan's wall time.

Two rounds of requests, each round as many at once as the judge's lanes (``concurrency`` ×
replicas, at most ``MAX_LANES``), every prompt about as long as the sweep's mean first prompt
and each opening with its own number, so no server reuses another's cached prefix (a real
sweep does, for a document's judgments: the estimate errs on the slow side). The first round
asks for the start-up probe's tiny reply, the second for a reply of ``LONG_CHARS`` characters,
under a schema that makes the server write that much. Their latencies give a per-request time
at that prompt length and a time per completion token (``Speed``), from which
``Speed.wall_s`` estimates a sweep. Nothing of it is stored: it never enters a run.
"""

from __future__ import annotations

import asyncio
import statistics
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.probe import PROBE_PROMPT, ProbeReply
from judgeprobe.engine.request import Request, Sampling
from judgeprobe.engine.store import Result
from judgeprobe.text.tokens import CHARS_PER_TOKEN, approx_tokens

MAX_LANES = 32  # requests per round at most: a provider with 1,000 lanes is timed at 32
LONG_CHARS = 160  # the long round's reply, in characters (about 40 tokens)
MAX_PROMPT_TOKENS = 16_384  # the filler never exceeds this, whatever the sweep's mean
FILLER = "Record {n}.{i}: the committee met, read the minutes and agreed on item {i}."
MIN_TOKEN_SPREAD = 8  # the long round must write this many more tokens to time a token


class TimingReply(BaseModel):
    """The long round's reply: read leniently (the schema sent asks for its length)."""

    model_config = ConfigDict(title="timing")

    text: str


def _long_schema() -> dict[str, Any]:
    return {
        "title": "timing",
        "type": "object",
        "properties": {
            "text": {"type": "string", "minLength": LONG_CHARS, "maxLength": LONG_CHARS + 40}
        },
        "required": ["text"],
        "additionalProperties": False,
    }


@dataclass(frozen=True, slots=True)
class Speed:
    """A judge's measured speed: ``request_s`` + ``token_s`` × completion tokens per request.

    Both were measured with ``lanes`` requests in flight, on prompts of ``prompt_tokens``
    (estimated) tokens. ``note`` says what could not be measured (empty when all was).
    """

    request_s: float
    token_s: float
    lanes: int
    prompt_tokens: int
    sent: int
    note: str = ""

    @property
    def timed(self) -> bool:
        """Whether anything was measured (some timed request was answered)."""
        return self.request_s > 0 or self.token_s > 0

    def wall_s(self, requests: int, completion_tokens: int, lanes: int, rate_limit: float) -> float:
        """Seconds for ``requests`` with ``completion_tokens`` in all, over ``lanes`` lanes.

        Lanes beyond those timed are taken to scale linearly; a rate limit (requests per
        second) bounds it from below.
        """
        busy = requests * self.request_s + completion_tokens * self.token_s
        wall = busy / max(1, lanes)
        return max(wall, requests / rate_limit) if rate_limit else wall


def _filler(n: int, tokens: int) -> str:
    """Neutral text of about ``tokens`` tokens that opens with ``n`` (its own prefix)."""
    line = FILLER.format(n=n, i=0)
    count = max(1, tokens // approx_tokens(line))
    return "\n".join(FILLER.format(n=n, i=i) for i in range(count))


def _request(endpoint: Endpoint, n: int, prompt_tokens: int, *, long: bool) -> Request:
    ask = (
        f"Reply with a JSON object whose text field describes the records above in about "
        f"{LONG_CHARS} characters."
        if long
        else PROBE_PROMPT
    )
    content = f"{_filler(n, prompt_tokens)}\n\n{ask}"
    schema = _long_schema() if long else ProbeReply.model_json_schema()
    return Request(
        endpoint=endpoint.judge.name,
        messages=({"role": "user", "content": content},),
        schema_name="timing" if long else "probe",
        schema=schema,
        reply_model=TimingReply if long else ProbeReply,
        sampling=Sampling(max_tokens=LONG_CHARS if long else 24),
        seed=0,
        fingerprint=endpoint.info.fingerprint,
    )


def _tokens(result: Result) -> int:
    """The reply's completion tokens as the server counted them, else estimated."""
    return result.completion_tokens or max(1, round(len(result.raw) / CHARS_PER_TOKEN))


async def timed_probe(endpoint: Endpoint, prompt_tokens: int) -> Speed:
    """Time two rounds of requests at the judge's concurrency (see the module docstring)."""
    lanes = min(MAX_LANES, endpoint.judge.concurrency * len(endpoint.judge.replicas))
    prompt_tokens = max(1, min(prompt_tokens, MAX_PROMPT_TOKENS))
    original = endpoint.engine
    endpoint.engine = original.model_copy(update={"max_reasks": 0, "max_attempts": 2})
    rounds: list[list[Result]] = []
    try:
        for k, long in enumerate((False, True)):
            asked = [
                _request(endpoint, k * lanes + i, prompt_tokens, long=long) for i in range(lanes)
            ]
            found = await asyncio.gather(*(endpoint.execute(r) for r in asked))
            rounds.append([r for r in found if r.status == "valid"])
    finally:
        endpoint.engine = original
    short, long_ = rounds
    sent = 2 * lanes
    if not short and not long_:
        return Speed(0.0, 0.0, lanes, prompt_tokens, sent, "no timed request was answered")
    if not short or not long_:
        done = short or long_
        t = statistics.median(r.latency_s for r in done)
        return Speed(t, 0.0, lanes, prompt_tokens, sent, "per token not timed (a round failed)")
    t_s, t_l = (statistics.median(r.latency_s for r in rs) for rs in (short, long_))
    c_s, c_l = (statistics.median(_tokens(r) for r in rs) for rs in (short, long_))
    if c_l - c_s < MIN_TOKEN_SPREAD or t_l <= t_s:
        note = "per token not timed (the long replies were not longer or slower)"
        return Speed(statistics.mean((t_s, t_l)), 0.0, lanes, prompt_tokens, sent, note)
    token_s = (t_l - t_s) / (c_l - c_s)
    return Speed(max(0.0, t_s - token_s * c_s), token_s, lanes, prompt_tokens, sent)
