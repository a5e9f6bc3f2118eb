"""One judge endpoint: its replicas, bounded concurrency, a rate cap, retries and re-asks.

Transport retries (tenacity), re-asks (the reply did not conform) and escalations (the reply
was cut at ``max_tokens``: asked once more with a larger budget, never re-sent unchanged) are
counted apart. Every call ends as a ``Result``: valid, or invalid with the raw text and the
reason. Never a default verdict, never a dropped request. The HTTP hot path is aiohttp with
orjson bodies: the orchestrator must cost far less than the judge it drives (see
bench/RESULTS.md).

``converse`` is the retry and re-ask policy on its own, over any ``send`` function, so a
batch file's answers (judgeprobe.engine.batch) are validated exactly as live ones.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import orjson
from asyncio_throttle.throttler import Throttler
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
)

from judgeprobe import REDACTED
from judgeprobe.engine.replicas import ReplicaPool
from judgeprobe.engine.request import Message, Request
from judgeprobe.engine.retry import (
    BadResponse,
    HTTPStatusError,
    backoff,
    describe,
    is_outage,
    is_replica_fault,
    is_retryable,
    status_of,
)
from judgeprobe.engine.settings import EngineConfig, JudgeConfig
from judgeprobe.engine.store import Result
from judgeprobe.engine.structured import response_format
from judgeprobe.engine.validate import (
    ReplyError,
    TextReply,
    TokenReply,
    TopTokens,
    parse_reply,
    reask_message,
)
from judgeprobe.engine.wire import logprob_fields, wire_sampling

#: Statuses that are not worth retrying now but may be fixed by the user before a resume.
_CONFIG_STATUS = frozenset({401, 403, 404})

#: Leading prompt characters that identify a shared prefix (instructions and document start).
PREFIX_CHARS = 2048


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """What the start-up probe learned about an endpoint."""

    backend: str
    model: str
    fingerprint: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Completion:
    """The parts of a chat completion the engine uses."""

    text: str
    finish_reason: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    top: TopTokens | None = None  # the first token's top log-probabilities, when returned


class Deferred(Exception):
    """The request was handed elsewhere (a batch file line); its judgment waits for it."""

    def __init__(self, custom_id: str, line: bytes) -> None:
        super().__init__(custom_id)
        self.custom_id = custom_id
        self.line = line


#: Sends one conversation (re-ask round, max_tokens) and returns the judge's completion.
Send = Callable[[list[Message], int, int], Awaitable[Completion]]


def escalated(budget: int, engine: EngineConfig) -> int:
    """The one larger budget a reply cut at ``budget`` tokens is asked again with."""
    return min(engine.max_tokens_cap, int(budget * engine.escalation_factor))


def chat_body(
    req: Request,
    messages: list[Message],
    info: ServerInfo,
    judge: JudgeConfig,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """The OpenAI chat-completions body for one attempt (live or in a batch file).

    ``max_tokens`` replaces the request's own budget (an escalation).
    """
    body: dict[str, Any] = {
        "model": info.model,
        "messages": messages,
        **wire_sampling(info.backend, req.sampling).fields,  # mapped per backend, or refused
        "max_tokens": max_tokens or req.sampling.max_tokens,
        "seed": req.seed,
    }
    if not issubclass(req.reply_model, TextReply):
        body["response_format"] = response_format(info.backend, req.schema_name, req.schema)
    elif req.reply_model.schema_sent is not None:  # a judge's own JSON verdict, schema from map
        schema = req.reply_model.schema_sent
        body["response_format"] = response_format(info.backend, req.schema_name, schema)
    if issubclass(req.reply_model, TokenReply):  # read from the first token's log-probabilities
        body |= logprob_fields(info.backend)
    if judge.disable_thinking:  # vLLM, llama-server and SGLang read this
        body["chat_template_kwargs"] = {"enable_thinking": False}
    return body


def parse_completion(data: Any) -> Completion:
    """Read a chat-completion JSON object; BadResponse when it is not one."""
    try:
        choices = data["choices"]
        choice = choices[0] if choices else None
        usage = data.get("usage") or {}
        return Completion(
            text=((choice["message"].get("content") or "") if choice else ""),
            finish_reason=((choice.get("finish_reason") or "") if choice else ""),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            top=first_token(choice) if choice else None,
        )
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        raise BadResponse(f"not a chat completion ({type(exc).__name__})") from None


def first_token(choice: Any) -> TopTokens | None:
    """The first reply token's top log-probabilities, OpenAI's form (vLLM, TGI, llama-server).

    ``choice.logprobs.content[0].top_logprobs``: a list of ``{token, logprob}``. None when the
    choice carries none (not asked for, or a server that does not return them); an entry of
    another shape is left out, so a server's odd field never fails a reply read from its text.
    """
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        return None
    top = content[0].get("top_logprobs")
    if not isinstance(top, list):
        return None
    return tuple(
        (str(t["token"]), float(t["logprob"]))
        for t in top
        if isinstance(t, dict)
        and "token" in t
        and isinstance(t.get("logprob"), int | float)
        and not isinstance(t.get("logprob"), bool)
    )


def redact(text: str, secrets: list[str]) -> str:
    """``text`` without any of ``secrets`` (a server may echo the credentials it refused)."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def _error_message(raw: bytes) -> str:
    try:
        data = orjson.loads(raw)
        return str(data["error"]["message"] if isinstance(data.get("error"), dict) else data)
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return raw[:200].decode(errors="replace")


class SendFailed(Exception):
    """Every transport attempt of one send failed; ``cause`` is the last failure."""

    def __init__(self, cause: BaseException, attempts: int) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.attempts = attempts


def retry_policy(engine: EngineConfig, deadline: float) -> AsyncRetrying:
    """Transport retries of one send.

    Retryable failures only (429, 5xx, timeouts, resets), at most ``max_attempts`` attempts in all,
    jittered backoff honouring Retry-After, and never past the request deadline.
    """
    return AsyncRetrying(
        retry=retry_if_exception(is_retryable),
        stop=stop_after_attempt(engine.max_attempts)
        | stop_after_delay(max(0.0, deadline - time.monotonic())),
        wait=backoff(engine.backoff_base_s, engine.backoff_cap_s),
        reraise=True,
    )


async def send_with_retries(
    call: Callable[[], Awaitable[Completion]], engine: EngineConfig, deadline: float
) -> tuple[Completion, int]:
    """One send and its transport retries; the completion and the attempts it took.

    The first attempt goes out directly, so the common case never builds a retry object (it
    is measured on the hot path). After a failure the retry policy takes over and replays
    that failure as its own first attempt, so the backoff and the attempt cap count it.
    ``Deferred`` passes through: the request is handed on, not failed.
    """
    try:
        return await call(), 1
    except Deferred:
        raise
    except Exception as exc:
        first: Exception = exc
    attempts = 1
    try:
        async for attempt in retry_policy(engine, deadline):
            with attempt:
                attempts = attempt.retry_state.attempt_number
                if attempts == 1:
                    raise first
                return await call(), attempts
    except Deferred:
        raise
    except Exception as exc:
        raise SendFailed(exc, attempts) from exc
    raise AssertionError("the retry policy either returns or raises")  # pragma: no cover


@dataclass(slots=True)
class Repairs:
    """The budgets a non-conforming reply draws on, apart from transport retries."""

    budget: int  # max_tokens of the next send
    reasks: int = 0
    escalations: int = 0


def next_repair(exc: ReplyError, repairs: Repairs, engine: EngineConfig, deadline: float) -> str:
    """What a non-conforming reply leads to.

    ``"escalate"`` (cut at max_tokens: once, with a larger budget, never re-sent unchanged),
    ``"reask"`` (the problem told to the judge), or the Invalid reason that ends the request.
    Updates ``repairs`` for the next send.
    """
    late = time.monotonic() >= deadline
    if exc.final:
        return str(exc)
    if exc.truncated:
        larger = escalated(repairs.budget, engine)
        if repairs.escalations:
            how = "after one escalation"
        elif larger <= repairs.budget:
            how = "the cap; not escalated"
        elif late:
            how = "request deadline passed; not escalated"
        else:
            repairs.escalations += 1
            repairs.budget = larger
            return "escalate"
        return f"{exc} at {repairs.budget} tokens, {how}"
    if repairs.reasks < engine.max_reasks and not late:
        repairs.reasks += 1
        return "reask"
    return str(exc)


@dataclass(slots=True)
class _Tally:
    """What one request has used so far (HTTP attempts, tokens), beside its repairs."""

    start: float
    repairs: Repairs
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def result(self, key: str, model: str, endpoint: str, **fields: Any) -> Result:
        """The request's end, with everything it used."""
        return Result(
            key=key,
            attempts=self.attempts,
            reasks=self.repairs.reasks,
            escalations=self.repairs.escalations,
            latency_s=time.monotonic() - self.start,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            model=model,
            endpoint=endpoint,
            completed_at=time.time(),
            **fields,
        )


async def converse(
    req: Request, send: Send, engine: EngineConfig, model: str, endpoint: str
) -> Result:
    """Run one request to its end: a valid result or an explicit Invalid one.

    Three budgets, each counted apart in the result: ``max_attempts`` transport attempts per
    send (``send_with_retries``), ``max_reasks`` re-asks of a reply that does not conform,
    and one escalation of a reply cut at ``max_tokens`` (``next_repair``); the request
    deadline bounds them all. A request therefore makes at most
    ``(1 + max_reasks + 1) × max_attempts`` HTTP calls.
    """
    messages = [dict(m) for m in req.messages]
    tally = _Tally(time.monotonic(), Repairs(budget=req.sampling.max_tokens))
    repairs, deadline = tally.repairs, tally.start + engine.request_deadline_s

    def done(**fields: Any) -> Result:
        return tally.result(req.key, model, endpoint, **fields)

    while True:
        try:
            call = partial(send, messages, repairs.reasks, repairs.budget)
            reply, used = await send_with_retries(call, engine, deadline)
        except SendFailed as failed:
            tally.attempts += failed.attempts
            return done(
                status="invalid",
                invalid_reason=f"transport: {describe(failed.cause)} after {tally.attempts} "
                "attempt(s)",
                retryable=is_retryable(failed.cause) or status_of(failed.cause) in _CONFIG_STATUS,
            )
        tally.attempts += used
        tally.prompt_tokens += reply.prompt_tokens
        tally.completion_tokens += reply.completion_tokens
        text, finish = reply.text, reply.finish_reason
        try:
            parsed = parse_reply(text, req.reply_model, finish, reply.top)
        except ReplyError as exc:
            step = next_repair(exc, repairs, engine, deadline)
            if step == "escalate":
                continue  # the same conversation, a larger budget
            if step == "reask":
                messages += [
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": reask_message(str(exc), req.reply_model)},
                ]
                continue
            return done(status="invalid", raw=text, invalid_reason=step, finish_reason=finish)
        # As the judge was asked for it (a label scheme's keys and verdicts, protocols.names),
        # so the stored reply validates again as the same model.
        asked = parsed.model_dump(by_alias=True)
        return done(status="valid", reply=asked, raw=text, finish_reason=finish)


class Endpoint:
    """Sends requests to one judge: one OpenAI-compatible server or several replicas."""

    #: Whether requests go to a server (so its credentials must be at hand).
    live = True

    def __init__(
        self,
        judge: JudgeConfig,
        engine: EngineConfig,
        info: ServerInfo,
        auth: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        """``auth``: each replica's headers, resolved elsewhere (a Ray worker gets them)."""
        self.judge = judge
        self.engine = engine
        self.info = info
        if auth is None:
            auth = {url: judge.auth_headers(url) for url in judge.replicas} if self.live else {}
            secrets = judge.secrets() if self.live else []
        else:
            shown = [v for headers in auth.values() for v in headers.values()]
            secrets = [s for v in shown for s in (v, v.split(" ", 1)[-1]) if len(s) >= 4]
        self._secrets = secrets  # redacted from echoed errors
        self.pool = ReplicaPool(
            judge.replicas, judge.concurrency, {"Content-Type": "application/json"},
            engine.attempt_timeout_s, replica_headers=auth,
            probe_every_s=max(0.05, min(1.0, engine.backoff_cap_s)),
        )  # fmt: skip
        # One admission per 1/rate seconds: asyncio-throttle admits while its log holds fewer
        # than ``rate_limit`` entries, so a fractional rate per 1-second period would round up.
        self._throttler = (
            Throttler(rate_limit=1, period=1.0 / judge.rate_limit) if judge.rate_limit else None
        )
        self._in_flight: dict[str, asyncio.Future[Result]] = {}  # request key → its answer

    async def close(self) -> None:
        """Close the endpoint's connections and replica probes."""
        await self.pool.close()

    async def _post(self, body: bytes, prefix: int, deadline: float) -> Completion:
        await self.pool.wait_reachable(deadline)  # an outage holds the request, not its attempts
        replica = self.pool.pick(prefix)
        replica.outstanding += 1
        try:
            async with replica.slots:
                if self._throttler is not None:
                    async with self._throttler:
                        pass
                replica.sent += 1
                async with replica.session.post(replica.chat_url, data=body) as resp:
                    raw = await resp.read()
                    if resp.status >= 300:
                        retry_after = resp.headers.get("Retry-After")
                        message = redact(_error_message(raw), self._secrets)
                        raise HTTPStatusError(resp.status, message, retry_after)
            try:
                completion = parse_completion(orjson.loads(raw))
            except orjson.JSONDecodeError:
                raise BadResponse("body is not JSON") from None
        except Exception as exc:
            if is_outage(exc):
                self.pool.unreachable(replica)
            elif is_replica_fault(exc):
                self.pool.failed(replica)
            raise
        finally:
            replica.outstanding -= 1
        self.pool.succeeded(replica)
        return completion

    async def execute_once(self, req: Request) -> Result:
        """``execute``, sent once for every caller that asks the same key while it is in flight.

        Two judgments that show one prompt (a shared screen) and run together share one
        request. A caller that finds the key in flight waits for that answer; when the sender
        stops without one (cancelled, or an exception) each waiting caller asks for itself.
        """
        while (pending := self._in_flight.get(req.key)) is not None:
            try:
                return await asyncio.shield(pending)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not pending.cancelled() or (task is not None and task.cancelling()):
                    raise  # this caller was cancelled, not the sender
        answer: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._in_flight[req.key] = answer
        try:
            result = await self.execute(req)
        except BaseException:
            answer.cancel()  # the waiting callers ask for themselves
            raise
        finally:
            del self._in_flight[req.key]
        answer.set_result(result)
        return result

    async def execute(self, req: Request) -> Result:
        """Run one request to its end: a valid result or an explicit Invalid one."""
        prefix = hash(req.messages[0]["content"][:PREFIX_CHARS]) if req.messages else 0
        deadline = time.monotonic() + self.engine.request_deadline_s

        async def send(messages: list[Message], _round: int, max_tokens: int) -> Completion:
            body = chat_body(req, messages, self.info, self.judge, max_tokens)
            return await self._post(orjson.dumps(body), prefix, deadline)

        return await converse(req, send, self.engine, self.info.model, self.judge.name)


async def close_all(endpoints: Mapping[str, Endpoint]) -> None:
    """Close every endpoint's connections (idempotent)."""
    for endpoint in endpoints.values():
        await endpoint.close()
