"""A cached asker: one judgment's requests, each answered from the store when already final."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel

from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.request import Request, Sampling
from judgeprobe.engine.store import Result, Store
from judgeprobe.engine.validate import TextReply


@cache
def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """A reply model's JSON schema (a text reply's reading rule), built once per model."""
    if issubclass(model, TextReply):
        return model.key_schema
    return model.model_json_schema()


@cache
def _with_max_tokens(sampling: Sampling, max_tokens: int) -> Sampling:
    """One shared copy per (sampling, stage budget): no pydantic copy per request."""
    return sampling.model_copy(update={"max_tokens": max_tokens})


class CachedAsker:
    """Builds each stage's request, reuses a stored final result, else sends and stores it."""

    def __init__(
        self, endpoint: Endpoint, store: Store, sampling: Sampling, seed: int, salt: str = ""
    ) -> None:
        self.endpoint = endpoint
        self.store = store
        self.sampling = sampling
        self.seed = seed
        self.salt = salt  # a fresh cache key for every request (the noise-floor repeat)
        self.results: list[Result] = []

    def request(
        self, messages: Sequence[dict[str, str]], reply_model: type[BaseModel], max_tokens: int
    ) -> Request:
        """The request for one stage of a judgment, keyed so the store can answer it again."""
        schema = schema_of(reply_model)
        return Request(
            endpoint=self.endpoint.judge.name,
            messages=tuple(messages),
            schema_name=str(schema.get("title", reply_model.__name__)),
            schema=schema,
            reply_model=reply_model,
            sampling=_with_max_tokens(self.sampling, max_tokens),
            seed=self.seed,
            fingerprint=self.endpoint.info.fingerprint,
            salt=self.salt,
        )

    async def __call__(
        self, messages: Sequence[dict[str, str]], reply_model: type[BaseModel], max_tokens: int
    ) -> Result:
        """Ask once per key: the stored result when there is one, else the endpoint."""
        req = self.request(messages, reply_model, max_tokens)
        result = self.store.get(req.key)
        if result is None or result.retryable:
            result = await self.endpoint.execute_once(req)
            self.store.put(result)
        self.results.append(result)
        return result

    def totals(self) -> dict[str, Any]:
        """The request keys and summed cost of every request asked so far (an Outcome's)."""
        return totals(self.results)


def totals(used: Sequence[Result]) -> dict[str, Any]:
    """The request keys and summed cost of ``used`` requests, as an Outcome's fields."""
    return {
        "request_keys": [r.key for r in used],
        "attempts": sum(r.attempts for r in used),
        "reasks": sum(r.reasks for r in used),
        "escalations": sum(r.escalations for r in used),
        "latency_s": sum(r.latency_s for r in used),
        "prompt_tokens": sum(r.prompt_tokens for r in used),
        "completion_tokens": sum(r.completion_tokens for r in used),
    }
