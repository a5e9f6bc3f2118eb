"""One judge endpoint: bounded concurrency, an optional rate cap, transport retries and re-asks.

Transport retries (tenacity) and re-asks (the reply did not conform) are counted apart. Every
call ends as a ``Result``: valid, or invalid with the raw text and the reason. Never a default
verdict, never a dropped request.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from typing import Any

import openai
from asyncio_throttle.throttler import Throttler
from openai.types.chat import ChatCompletion
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, stop_after_delay

from judgeprobe.config import EngineConfig, JudgeConfig
from judgeprobe.engine.request import Request
from judgeprobe.engine.retry import BackoffWait, describe, is_retryable
from judgeprobe.engine.store import Result
from judgeprobe.engine.structured import response_format
from judgeprobe.engine.validate import ReplyError, parse_reply, reask_message

#: Statuses that are not worth retrying now but may be fixed by the user before a resume.
_CONFIG_STATUS = frozenset({401, 403, 404})


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """What the start-up probe learned about an endpoint."""

    backend: str
    model: str
    fingerprint: str
    details: dict[str, Any] = field(default_factory=dict)


class Endpoint:
    """Sends requests to one OpenAI-compatible server."""

    def __init__(self, judge: JudgeConfig, engine: EngineConfig, info: ServerInfo) -> None:
        self.judge = judge
        self.engine = engine
        self.info = info
        api_key = os.environ.get(judge.api_key_env, "") if judge.api_key_env else ""
        self.client = openai.AsyncOpenAI(
            base_url=judge.url,
            api_key=api_key or "not-needed",
            max_retries=0,
            timeout=engine.attempt_timeout_s,
        )
        self._slots = asyncio.Semaphore(judge.concurrency)
        self._throttler = (
            Throttler(rate_limit=judge.rate_limit, period=1.0) if judge.rate_limit else None  # type: ignore[arg-type]
        )

    async def close(self) -> None:
        await self.client.close()

    def _extra_body(self, req: Request) -> dict[str, object]:
        body: dict[str, object] = {
            "response_format": response_format(self.info.backend, req.schema_name, req.schema)
        }
        if self.judge.disable_thinking:  # vLLM, llama-server and SGLang read this
            body["chat_template_kwargs"] = {"enable_thinking": False}
        return body

    async def _once(self, messages: list[dict[str, str]], req: Request) -> ChatCompletion:
        async with self._slots:
            if self._throttler is not None:
                async with self._throttler:
                    pass
            return await asyncio.wait_for(
                self.client.chat.completions.create(
                    model=self.info.model,
                    messages=messages,  # type: ignore[arg-type]
                    temperature=req.sampling.temperature,
                    top_p=req.sampling.top_p,
                    max_tokens=req.sampling.max_tokens,
                    seed=req.seed,
                    extra_body=self._extra_body(req),
                ),
                timeout=self.engine.attempt_timeout_s,
            )

    async def execute(self, req: Request) -> Result:
        """Run one request to its end: a valid result or an explicit Invalid one."""
        start = time.monotonic()
        messages = [dict(m) for m in req.messages]
        attempts = reasks = prompt_tokens = completion_tokens = 0
        deadline = start + self.engine.request_deadline_s

        def done(**fields: object) -> Result:
            return Result(
                key=req.key,
                attempts=attempts,
                reasks=reasks,
                latency_s=time.monotonic() - start,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                model=self.info.model,
                endpoint=self.judge.name,
                completed_at=time.time(),
                **fields,  # type: ignore[arg-type]
            )

        while True:
            retrying = AsyncRetrying(
                retry=retry_if_exception(is_retryable),
                stop=stop_after_attempt(self.engine.max_attempts)
                | stop_after_delay(max(0.0, deadline - time.monotonic())),
                wait=BackoffWait(self.engine.backoff_base_s, self.engine.backoff_cap_s),
                reraise=True,
            )
            try:
                async for attempt in retrying:
                    with attempt:
                        attempts += 1
                        resp = await self._once(messages, req)
            except Exception as exc:
                status = getattr(exc, "status_code", None)
                return done(
                    status="invalid",
                    invalid_reason=f"transport: {describe(exc)} after {attempts} attempt(s)",
                    retryable=is_retryable(exc) or status in _CONFIG_STATUS,
                )
            if resp.usage is not None:
                prompt_tokens += resp.usage.prompt_tokens
                completion_tokens += resp.usage.completion_tokens
            choice = resp.choices[0] if resp.choices else None
            text = (choice.message.content or "") if choice else ""
            finish = choice.finish_reason if choice else None
            try:
                reply = parse_reply(text, req.reply_model, finish)
            except ReplyError as exc:
                if reasks < self.engine.max_reasks and time.monotonic() < deadline:
                    reasks += 1
                    messages += [
                        {"role": "assistant", "content": text},
                        {"role": "user", "content": reask_message(str(exc))},
                    ]
                    continue
                return done(
                    status="invalid", raw=text, invalid_reason=str(exc), finish_reason=finish or ""
                )
            return done(
                status="valid", reply=reply.model_dump(), raw=text, finish_reason=finish or ""
            )
