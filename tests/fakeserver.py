"""A fake OpenAI-compatible judge server for fault injection (never for the end-to-end test).

It answers ``/v1/models``, ``/version`` (so it looks like vLLM), ``/tokenize`` (as vLLM does:
``messages`` in, the templated prompt's ``count`` out; ``tokenizer=False`` leaves it out, as an
API without one) and ``/v1/chat/completions`` with JSON that conforms to the request's
schema, chosen by a hash of the messages, so results are deterministic. A share of chat
requests fail in a chosen way: HTTP 429 (with Retry-After), 500, 503, a stall past the
client's timeout, a connection reset, truncated JSON, non-JSON text, or wrong-schema JSON.
Requests for the start-up probe's tiny schema (or a text judge's probe) are never faulted or
counted, unless ``nonconforming``.
``reply_tokens`` makes every reply that long: asked for fewer tokens (``max_tokens``), the
server cuts it there with ``finish_reason`` "length", as a real one does with over-long JSON.

Security and refusal checks: ``api_key`` (Bearer) or ``basic`` (``user:password``) makes
every route demand that credential, answering 401 with the credential it was shown echoed
back (as a careless gateway would); ``follow_instructions`` ignores ``response_format`` and
answers with the JSON object the prompt spells out (``{"ok": true}`` when it spells none);
``ignore_schema`` drops ``response_format`` unread, as a server without structured output or a
proxy that strips it does, and answers every request (the probe's too) with ``free_text``.
``verdict`` fixes every stated verdict (a judge that never reads the texts); ``explanation``
fixes every explanation (a judge answering with markup, for the hostile-text tests).
Log-probabilities: a request with ``logprobs: true`` gets OpenAI's ``choice.logprobs`` for its
first token, the ``top_logprobs`` most probable of ``first_tokens`` (its reply text the most
probable one); ``logprobs=False`` makes a server that never returns them (``logprobs: null``).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import random
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web

from judgeprobe.engine.probe import TEXT_PROBE_PROMPT
from judgeprobe.selftest.loopback import LoopbackServer

#: The fake judge's first-token distribution (token, logprob), most probable first: ``M`` and
#: `` M`` are one answer once whitespace is stripped.
FIRST_TOKENS = (("M", -0.5), (" M", -1.6), ("m", -1.9), ("The", -3.0), ("Output", -3.5),
                ("I", -4.0), ("A", -4.5), ("B", -5.0))  # fmt: skip
SEEDED_TEXTS = ("Summary text compared.", "The summary text, compared.",
                "Compared, the summary text.", "The summary and its text compared.",
                "The text of the summary, compared.")  # fmt: skip
FAULTS = ("429", "500", "503", "timeout", "reset", "truncated", "nonjson", "wrongschema")


def _pick(options: list[Any], seed: str) -> Any:
    return options[hashlib.sha256(seed.encode()).digest()[0] % len(options)]


def instance(schema: dict[str, Any], defs: dict[str, Any], seed: str) -> Any:
    """A deterministic value that conforms to ``schema`` (the subset pydantic emits)."""
    if "$ref" in schema:
        return instance(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, seed)
    if "enum" in schema:
        return _pick(schema["enum"], seed)
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: instance(v, defs, f"{seed}/{k}") for k, v in props.items()}
    if kind == "array":
        return [instance(schema.get("items", {}), defs, f"{seed}/0")]
    if kind == "boolean":
        return True
    if kind == "integer":
        return _pick(list(range(schema.get("minimum", 0), schema.get("maximum", 5) + 1)), seed)
    return "Summary text compared."


def reply_for(prompt: str, schema: dict[str, Any]) -> str:
    """The fake judge's deterministic, schema-conforming answer to a prompt."""
    return orjson.dumps(instance(schema, schema.get("$defs", {}), prompt)).decode()


def _spelled_out(prompt: str) -> str:
    """The first JSON object written out in ``prompt``, as an obedient model would copy it."""
    for found in re.finditer(r"\{[^{}]*\}", prompt):
        try:
            return orjson.dumps(orjson.loads(found.group())).decode()
        except orjson.JSONDecodeError:
            continue
    return '{"ok": true}'


class FakeJudge(LoopbackServer):
    """Runs in a background thread; ``url`` is the OpenAI base URL (ending in /v1)."""

    def __init__(
        self,
        fault_rate: float = 0.0,
        faults: tuple[str, ...] = FAULTS,
        seed: int = 0,
        stall_s: float = 5.0,
        *,
        nonconforming: bool = False,
        hang: bool = False,
        latency_s: float = 0.0,
        fixed_status: int | None = None,
        reply_tokens: int | None = None,
        api_key: str | None = None,
        basic: str | None = None,
        follow_instructions: bool = False,
        ignore_schema: bool = False,
        seeded_texts: bool = False,
        tokenizer: bool = True,
        verdict: str | None = None,
        explanation: str | None = None,
        free_text: str | Callable[[str], str] = (
            "Response 1 covers the document more accurately.\n\n[[A]]"
        ),
        first_tokens: tuple[tuple[str, float], ...] = FIRST_TOKENS,
        logprobs: bool = True,
    ) -> None:
        super().__init__()
        self.first_tokens = first_tokens
        self.logprobs = logprobs
        self.fault_rate = fault_rate
        self.faults = faults
        self.stall_s = stall_s
        self.nonconforming = nonconforming
        self.hang = hang
        self.latency_s = latency_s
        self.fixed_status = fixed_status
        self.reply_tokens = reply_tokens
        self.follow_instructions = follow_instructions
        self.ignore_schema = ignore_schema
        self.tokenizer = tokenizer
        self.tokenized = 0
        # Generated texts (the builder's "text" schema) follow the request's seed, as a real
        # sampler's do, so two seeded paraphrases or draws of one prompt differ.
        self.seeded_texts = seeded_texts
        # A judge that never reads: every reply with a verdict gives this one ("[1,2]": always
        # the first-shown summary), whatever the texts.
        self.verdict = verdict
        self.explanation = explanation
        # The reply to a request with no response_format (a judge's own prompt, protocol own);
        # a callable answers each conversation (its messages' text, a re-ask's included).
        self.free_text = free_text
        self.expected_auth = (
            f"Bearer {api_key}"
            if api_key is not None
            else f"Basic {base64.b64encode(basic.encode()).decode()}"
            if basic is not None
            else None
        )
        self.auth_seen: list[tuple[str, str]] = []  # (path, Authorization header) per request
        self.rng = random.Random(seed)
        self.injected: Counter[str] = Counter()
        self.chat_requests = 0
        self.bodies: list[dict[str, Any]] = []

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._auth])
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/version", self._version)
        app.router.add_post("/v1/chat/completions", self._chat)
        if self.tokenizer:
            app.router.add_post("/tokenize", self._tokenize)
        return app

    @web.middleware
    async def _auth(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        shown = request.headers.get("Authorization", "")
        self.auth_seen.append((request.path, shown))
        if self.expected_auth is not None and shown != self.expected_auth:
            message = f"invalid credentials: {shown or 'none'}"
            return web.json_response({"error": {"message": message}}, status=401)
        return await handler(request)

    async def _models(self, _: web.Request) -> web.Response:
        body = {
            "object": "list",
            "data": [{"id": "fake-judge", "object": "model", "owned_by": "tests"}],
        }
        return web.json_response(body)

    async def _version(self, _: web.Request) -> web.Response:
        return web.json_response({"version": "fake-0.1"})

    async def _tokenize(self, request: web.Request) -> web.Response:
        """vLLM's ``POST /tokenize`` with ``messages``: words and marks of a role-line template."""
        body = orjson.loads(await request.read())
        messages = body.get("messages")
        if not isinstance(messages, list):
            return web.json_response({"error": {"message": "messages required"}}, status=400)
        templated = "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in messages)
        found = re.findall(r"\w+|[^\w\s]", templated + "<|assistant|>\n")
        self.tokenized += 1
        return web.json_response({"count": len(found), "max_model_len": 0, "tokens": []})

    def first_token_logprobs(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """OpenAI's ``choice.logprobs`` for a one-token reply, when asked for and returned."""
        if not body.get("logprobs") or not self.logprobs:
            return None
        top = [{"token": t, "logprob": lp, "bytes": list(t.encode())}
               for t, lp in self.first_tokens[: int(body.get("top_logprobs") or 0)]]  # fmt: skip
        token, logprob = self.first_tokens[0]
        return {"content": [{"token": token, "logprob": logprob, "bytes": list(token.encode()),
                             "top_logprobs": top}]}  # fmt: skip

    def _completion(
        self,
        content: str,
        finish: str = "stop",
        tokens: int = 20,
        logprobs: dict[str, Any] | None = None,
    ) -> web.Response:
        body = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "fake-judge",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "logprobs": logprobs,
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": 100,
                "completion_tokens": tokens,
                "total_tokens": 100 + tokens,
            },
        }
        return web.Response(body=orjson.dumps(body), content_type="application/json")

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body: dict[str, Any] = orjson.loads(await request.read())
        fmt = {} if self.ignore_schema else body.get("response_format") or {}
        schema = (
            fmt.get("json_schema", {}).get("schema") or fmt.get("schema") or fmt.get("value") or {}
        )
        is_probe = schema.get("title") == "probe"
        if body["messages"][-1]["content"] == TEXT_PROBE_PROMPT:  # a text judge's probe
            said = self.free_text if self.ignore_schema else "ready"
            return self._completion(said(TEXT_PROBE_PROMPT) if callable(said) else said)
        if self.follow_instructions:
            return self._completion(_spelled_out(body["messages"][-1]["content"]))
        if self.hang and not is_probe:
            await asyncio.sleep(3600)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if self.nonconforming:
            return self._completion('{"winner": 1}')
        if is_probe:
            return self._completion(reply_for("probe", schema))
        self.chat_requests += 1
        self.bodies.append(body)
        if self.fixed_status is not None:
            return web.json_response({"error": {"message": "fixed"}}, status=self.fixed_status)
        if body.get("logprobs"):  # a one-token reply read from its log-probabilities
            return self._completion(
                self.first_tokens[0][0], "length", 1, self.first_token_logprobs(body)
            )
        good = reply_for(orjson.dumps(body["messages"][:1]).decode(), schema)
        if not fmt:
            said = "\n".join(str(m["content"]) for m in body["messages"])  # re-asks too
            good = self.free_text(said) if callable(self.free_text) else self.free_text
        good = self._fixed(good, schema, body.get("seed", 0))
        if self.reply_tokens is not None:
            return self._budgeted(good, body, self.reply_tokens)
        if self.rng.random() >= self.fault_rate:
            return self._completion(good)
        fault = self.rng.choice(self.faults)
        self.injected[fault] += 1
        return await self._fault(fault, good, request)

    def _fixed(self, good: str, schema: dict[str, Any], seed: int) -> str:
        """The reply with what this judge fixes: its verdict, explanation, seeded texts."""
        fixed = {"verdict": self.verdict, "explanation": self.explanation}
        props = schema.get("properties", {})
        fixed = {k: v for k, v in fixed.items() if v is not None and k in props}
        if fixed:
            good = orjson.dumps({**orjson.loads(good), **fixed}).decode()
        if self.seeded_texts and schema.get("title") == "text":
            good = orjson.dumps({"text": SEEDED_TEXTS[seed % 5]}).decode()
        return good

    def _budgeted(self, good: str, body: dict[str, Any], reply_tokens: int) -> web.Response:
        """A reply of ``reply_tokens`` tokens, cut at the request's max_tokens when smaller."""
        budget = int(body.get("max_tokens") or reply_tokens)
        if budget >= reply_tokens:
            return self._completion(good, tokens=reply_tokens)
        return self._completion(good[: len(good) * budget // reply_tokens], "length", budget)

    async def _fault(self, fault: str, good: str, request: web.Request) -> web.StreamResponse:
        """The injected fault's response (``good`` is the reply a healthy server would send)."""
        if fault == "429":
            return web.json_response(
                {"error": {"message": "slow down"}}, status=429, headers={"Retry-After": "0.05"}
            )
        if fault in ("500", "503"):
            return web.json_response({"error": {"message": "server trouble"}}, status=int(fault))
        if fault == "timeout":
            await asyncio.sleep(self.stall_s)
            return self._completion(good)
        if fault == "reset":
            assert request.transport is not None
            request.transport.abort()
            return web.Response()
        if fault == "truncated":
            return self._completion(good[: len(good) // 2], finish="length")
        if fault == "nonjson":
            return self._completion("I think the first summary is better.")
        return self._completion('{"winner": "Summary 1"}')
