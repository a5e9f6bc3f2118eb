"""The context a judge serves, and which of a sweep's first requests do not fit it.

A judgment's first request (its prompt holds the document and both candidates) plus its reply
budget must fit the context the server reports, by the server's own rule: llama-server
``/props`` ``n_ctx`` (per slot: prompt + reply ≤ n_ctx), vLLM's ``max_model_len`` in
``/v1/models`` (prompt + max_tokens ≤ it; any server that lists it is checked so), TGI
``/info`` (prompt ≤ ``max_input_tokens`` and prompt + min(max_tokens, 1024) ≤
``max_total_tokens``). Prompts are counted with the server's own chat template and tokenizer
(vLLM ``/tokenize``, TGI ``/chat_tokenize``, llama-server ``/apply-template`` + ``/tokenize``);
one whose UTF-8 size already proves it fits is not sent (a token covers at least one byte);
where the server cannot count, the 1.3-tokens-a-word approximation is used and the refusal
says so. A backend that reports no context is not checked. The requests are plain data
(``FirstRequest``) that the planner above builds, so nothing here knows what a sweep is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson

from judgeprobe import JudgeprobeError
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.replicas import Replica
from judgeprobe.engine.request import Message
from judgeprobe.text.tokens import APPROXIMATION, approx_tokens

#: Tokens a chat template may add around a conversation (role markers, BOS, a default
#: system line such as Llama 3.1's dates or Qwen's "You are Qwen…"), for the size bound.
TEMPLATE_SLACK = 128
TGI_FIRST_CHUNK = 1024  # TGI counts at most this much of max_tokens (validation.rs)
COUNT_CONCURRENCY = 8


@dataclass(frozen=True, slots=True)
class Limit:
    """The context a server reports, and its rule for what fits."""

    total: int  # prompt + reply
    max_input: int | None  # prompt alone (TGI)
    source: str  # where it was read, for the refusal
    reply_cap: int | None = None  # counts at most this much of the reply budget (TGI)

    def fits(self, prompt: int, reply: int) -> bool:
        """Whether a prompt and its reply budget fit the judge's context window."""
        if self.max_input is not None and prompt > self.max_input:
            return False
        return prompt + (min(reply, self.reply_cap) if self.reply_cap else reply) <= self.total


@dataclass(frozen=True, slots=True)
class FirstRequest:
    """A judgment's first request, and the first judgment that sends it (for the message)."""

    messages: list[Message]
    max_tokens: int
    item_id: str
    protocol: str
    condition: str

    @property
    def size(self) -> int:
        """An upper bound on its prompt tokens: UTF-8 bytes plus the template's own."""
        return sum(len(m["content"].encode()) for m in self.messages) + TEMPLATE_SLACK


async def _json(session: aiohttp.ClientSession, url: str, body: Any = None) -> Any:
    """GET (or POST ``body``) ``url``; the JSON answer, None on any failure."""
    try:
        call = session.get(url) if body is None else session.post(url, json=body)
        async with call as resp:
            raw = await resp.read()
            return orjson.loads(raw) if resp.status == 200 else None
    except (aiohttp.ClientError, TimeoutError, orjson.JSONDecodeError):
        return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


async def _replica_limit(backend: str, model: str, replica: Replica) -> Limit | None:
    root = replica.url.removesuffix("/v1")
    if backend == "tgi":
        info = await _json(replica.session, f"{root}/info")
        if isinstance(info, dict) and (total := _int(info.get("max_total_tokens"))):
            max_input = _int(info.get("max_input_tokens"))
            source = f"TGI /info: max_input_tokens {max_input}, max_total_tokens {total}"
            return Limit(total, max_input, source, TGI_FIRST_CHUNK)
    if backend == "llama-server":
        props = await _json(replica.session, f"{root}/props")
        if isinstance(props, dict):
            settings = props.get("default_generation_settings")
            n_ctx = _int(settings.get("n_ctx")) if isinstance(settings, dict) else None
            if n_ctx := n_ctx or _int(props.get("n_ctx")):
                return Limit(n_ctx, None, f"llama-server /props: n_ctx {n_ctx} per slot")
    listing = await _json(replica.session, f"{replica.url}/models")
    cards = listing.get("data") if isinstance(listing, dict) else None
    for card in cards if isinstance(cards, list) else []:
        total = _int(card.get("max_model_len")) if isinstance(card, dict) else None
        if total and card.get("id") == model:
            return Limit(total, None, f"/v1/models: max_model_len {total}")
    return None


async def served_limit(endpoint: Endpoint) -> Limit | None:
    """The smallest context any replica of the judge reports; None when none reports one."""
    info = endpoint.info
    found = [await _replica_limit(info.backend, info.model, r) for r in endpoint.pool.replicas]
    known = [limit for limit in found if limit is not None]
    return min(known, key=lambda x: (x.max_input or x.total, x.total)) if known else None


async def count_tokens(endpoint: Endpoint, messages: list[Message]) -> int | None:
    """The prompt's tokens with the server's own chat template; None where it cannot say."""
    replica, backend = endpoint.pool.replicas[0], endpoint.info.backend
    root, session = replica.url.removesuffix("/v1"), replica.session
    if backend == "vllm":
        data = await _json(
            session, f"{root}/tokenize", {"model": endpoint.info.model, "messages": messages}
        )
        return _int(data.get("count")) if isinstance(data, dict) else None
    if backend == "tgi":
        data = await _json(session, f"{root}/chat_tokenize", {"model": "tgi", "messages": messages})
        found = data.get("tokenize_response") if isinstance(data, dict) else None
        return len(found) if isinstance(found, list) else None
    if backend == "llama-server":
        templated = await _json(session, f"{root}/apply-template", {"messages": messages})
        prompt = templated.get("prompt") if isinstance(templated, dict) else None
        if isinstance(prompt, str):
            body = {"content": prompt, "add_special": True, "parse_special": True}
            data = await _json(session, f"{root}/tokenize", body)
            found = data.get("tokens") if isinstance(data, dict) else None
            return len(found) if isinstance(found, list) else None
    return None


async def _too_long(
    endpoint: Endpoint, limit: Limit, requests: list[FirstRequest]
) -> list[tuple[FirstRequest, int, bool]]:
    """The requests that do not fit: each with its prompt tokens and whether approximated."""
    slots = asyncio.Semaphore(COUNT_CONCURRENCY)

    async def measure(req: FirstRequest) -> tuple[FirstRequest, int, bool] | None:
        if limit.fits(req.size, req.max_tokens):
            return None  # fits even if every byte were a token
        async with slots:
            exact = await count_tokens(endpoint, req.messages)
        if exact is None:
            text = " ".join(m["content"] for m in req.messages)
            tokens = approx_tokens(text) + TEMPLATE_SLACK
        else:
            tokens = exact
        return None if limit.fits(tokens, req.max_tokens) else (req, tokens, exact is None)

    found = await asyncio.gather(*(measure(r) for r in requests))
    return [f for f in found if f is not None]


async def check_context(
    endpoints: dict[str, Endpoint], first_requests: Callable[[], Awaitable[list[FirstRequest]]]
) -> None:
    """Refuse (one line) a sweep with a prompt that a judge's served context cannot take.

    ``first_requests`` is awaited only when a judge reports its context.
    """
    limits = {name: await served_limit(endpoint) for name, endpoint in endpoints.items()}
    if not any(limits.values()):
        return
    requests = await first_requests()
    for name, endpoint in endpoints.items():
        limit = limits[name]
        if limit is None:
            continue
        over = await _too_long(endpoint, limit, requests)
        if not over:
            continue
        req, tokens, approximate = max(over, key=lambda f: f[1])
        how = f" (approximated: {APPROXIMATION}; the server did not count)" if approximate else ""
        raise JudgeprobeError(
            f"judge {name}: {len(over)} of {len(requests)} prompts do not fit the context it "
            f"serves ({limit.source}); the longest, item {req.item_id} ({req.protocol}, "
            f"{req.condition}), is {tokens} tokens{how} with {req.max_tokens} more for the "
            "reply; leave such items out (subsets, limit), shorten them, or serve a longer "
            "context"
        )
