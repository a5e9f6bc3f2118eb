"""A fake vLLM OpenAI server that validates requests as vLLM does (no GPU needed).

Rules copied from vLLM's source (``vllm/entrypoints/openai/chat_completion/protocol.py``
``ChatCompletionRequest``, ``vllm/sampling_params.py`` ``SamplingParams._verify_args``, the
models route's ``ModelCard``), the model's output being the fake part:

* the request type allows extra fields and only logs "fields were present in the request
  but ignored": an unknown field (``repeat_penalty``, ``guided_json`` since 0.12 …) is
  dropped; ``ignored`` records each one, so a test can demand that nothing sent is ignored;
* ``repetition_penalty``, ``top_k``, ``min_p`` … are vLLM's own sampling parameters;
* ``seed`` is an int64, and −1 means "no seed"; temperature in [0, 2], 0 = greedy (top_p
  then forced to 1); 0 < top_p ≤ 1; repetition_penalty > 0 and finite; presence and
  frequency penalties in [−2, 2]; max_tokens ≥ 1;
* ``response_format``: ``text``, ``json_object``, ``json_schema`` (needs ``json_schema``
  with a ``name`` and the ``schema``) or ``structural_tag``;
* ``top_logprobs`` needs ``logprobs: true`` ("when using `top_logprobs`, `logprobs` must be set
  to true."), and at most the server's ``max_logprobs`` (default 20) are given;
* the prompt must leave room in ``max_model_len``: prompt ≥ max_model_len → "This model's
  maximum context length is N tokens. However, your request has P input tokens …";
  prompt + max_tokens > max_model_len → "'max_tokens' or 'max_completion_tokens' is too
  large: …"; errors are HTTP 400 ``{"error": {"message", "type": "BadRequestError",
  "param", "code": 400}}``;
* ``GET /v1/models`` cards carry ``max_model_len``; ``GET /version``; ``POST /tokenize``
  with ``messages`` applies the chat template and returns ``count`` and ``max_model_len``.
"""

from __future__ import annotations

import math
import time
from typing import Any

import orjson
from aiohttp import web

from tests.fake_tgi import tokens
from tests.fakeserver import FakeJudge, reply_for

INT64 = 2**63
KNOWN = {
    "messages", "model", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs",
    "max_tokens", "max_completion_tokens", "n", "presence_penalty", "response_format", "seed",
    "stop", "stream", "stream_options", "temperature", "top_p", "tools", "tool_choice", "user",
    "top_k", "min_p", "repetition_penalty", "min_tokens", "chat_template_kwargs",
    "structured_outputs", "add_generation_prompt", "continue_final_message",
}  # fmt: skip


class BadRequest(Exception):
    pass


def _template(messages: Any) -> str:
    if not isinstance(messages, list) or not all(
        isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages
    ):
        raise BadRequest("messages: a list of {role, content} is required")
    lines = [f"<|{m['role']}|>\n{m.get('content') or ''}" for m in messages]
    return "\n".join([*lines, "<|assistant|>\n"])


def _float(body: dict[str, Any], key: str, default: float) -> float:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRequest(f"{key}: Input should be a valid number")
    return float(value)


def _schema(fmt: Any) -> dict[str, Any] | None:
    if fmt is None:
        return None
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind not in ("text", "json_object", "json_schema", "structural_tag"):
        raise BadRequest(f"response_format.type: unknown {kind!r}")
    if kind != "json_schema":
        return None
    spec = fmt.get("json_schema")
    if not isinstance(spec, dict) or "name" not in spec or "schema" not in spec:
        raise BadRequest("response_format.json_schema: name and schema are required")
    schema: dict[str, Any] = spec["schema"]
    return schema


class FakeVLLM(FakeJudge):
    """vLLM's API on loopback; ``received`` holds the sampling parameters of every accepted
    request as vLLM would run them, ``ignored`` the request fields vLLM would drop."""

    def __init__(self, model: str = "qwen2.5-7b", max_model_len: int = 8192) -> None:
        super().__init__()
        self.model = model
        self.max_model_len = max_model_len
        self.received: list[dict[str, Any]] = []
        self.ignored: list[str] = []
        self.rejected: list[str] = []
        self.tokenized = 0
        self.max_logprobs = 20  # vLLM's --max-logprobs default

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/models", self._vllm_models)
        app.router.add_get("/version", self._version)
        app.router.add_post("/v1/chat/completions", self._vllm_chat)
        app.router.add_post("/tokenize", self._tokenize)
        return app

    async def _version(self, _: web.Request) -> web.Response:
        return web.json_response({"version": "0.24.0"})

    async def _vllm_models(self, _: web.Request) -> web.Response:
        card = {
            "id": self.model, "object": "model", "created": int(time.time()),
            "owned_by": "vllm", "root": "Qwen/Qwen2.5-7B-Instruct", "parent": None,
            "max_model_len": self.max_model_len, "permission": [],
        }  # fmt: skip
        return web.json_response({"object": "list", "data": [card]})

    @staticmethod
    def _error(message: str) -> web.Response:
        body: dict[str, dict[str, Any]] = {
            "error": {"message": message, "type": "BadRequestError", "param": None}
        }
        body["error"]["code"] = 400
        return web.json_response(body, status=400)

    def _validate(self, body: dict[str, Any]) -> dict[str, Any]:
        self.ignored += sorted(set(body) - KNOWN)
        prompt = len(tokens(_template(body.get("messages"))))
        temperature = _float(body, "temperature", 1.0)
        top_p = _float(body, "top_p", 1.0)
        penalty = _float(body, "repetition_penalty", 1.0)
        presence = _float(body, "presence_penalty", 0.0)
        frequency = _float(body, "frequency_penalty", 0.0)
        seed = body.get("seed")
        if seed is not None and (not isinstance(seed, int) or not -INT64 <= seed < INT64):
            raise BadRequest("seed: Input should be a valid int64")
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
        top = body.get("top_logprobs")
        if top is not None and top > 0 and not body.get("logprobs"):
            raise BadRequest("when using `top_logprobs`, `logprobs` must be set to true.")
        if top is not None and top > self.max_logprobs:
            raise BadRequest(
                f"Requested sample logprobs of {top}, which is greater than max allowed: "
                f"{self.max_logprobs}"
            )
        for ok, message in (
            (-2.0 <= presence <= 2.0, f"presence_penalty must be in [-2, 2], got {presence}."),
            (-2.0 <= frequency <= 2.0, f"frequency_penalty must be in [-2, 2], got {frequency}."),
            (math.isfinite(penalty) and penalty > 0, f"repetition_penalty must be greater than "
                                                     f"zero, got {penalty}."),
            (0.0 <= temperature <= 2.0, f"temperature must be in [0, 2], got {temperature}."),
            (0.0 < top_p <= 1.0, f"top_p must be in (0, 1], got {top_p}."),
            (max_tokens is None or max_tokens >= 1, f"max_tokens must be at least 1, got "
                                                    f"{max_tokens}."),
        ):  # fmt: skip
            if not ok:
                raise BadRequest(message)
        if prompt >= self.max_model_len:
            raise BadRequest(
                f"This model's maximum context length is {self.max_model_len} tokens. However, "
                f"your request has {prompt} input tokens. Please reduce the length of the "
                "input messages."
            )
        if max_tokens is not None and prompt + max_tokens > self.max_model_len:
            raise BadRequest(
                f"'max_tokens' or 'max_completion_tokens' is too large: {max_tokens}. This "
                f"model's maximum context length is {self.max_model_len} tokens and your "
                f"request has {prompt} input tokens ({max_tokens} > {self.max_model_len} - "
                f"{prompt})."
            )
        greedy = temperature == 0.0
        return {
            "temperature": temperature,
            "top_p": 1.0 if greedy else top_p,
            "repetition_penalty": penalty,
            "presence_penalty": presence,
            "seed": None if seed == -1 else seed,
            "max_tokens": max_tokens,
            "prompt_tokens": prompt,
            "schema": _schema(body.get("response_format")),
        }

    async def _vllm_chat(self, request: web.Request) -> web.Response:
        body = orjson.loads(await request.read())
        try:
            valid = self._validate(body)
        except BadRequest as exc:
            self.rejected.append(str(exc))
            return self._error(str(exc))
        self.received.append(valid)
        schema = valid["schema"]
        text = reply_for(orjson.dumps(body["messages"][:1]).decode(), schema or {})
        logprobs = self.first_token_logprobs(body)
        if logprobs is not None:  # a one-token reply read from its log-probabilities
            text = self.first_tokens[0][0]
        reply = {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "logprobs": logprobs, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": valid["prompt_tokens"], "completion_tokens": 20,
                      "total_tokens": valid["prompt_tokens"] + 20},
        }  # fmt: skip
        return web.Response(body=orjson.dumps(reply), content_type="application/json")

    async def _tokenize(self, request: web.Request) -> web.Response:
        body = orjson.loads(await request.read())
        try:
            found = tokens(_template(body.get("messages")))
        except BadRequest as exc:
            return self._error(str(exc))
        self.tokenized += 1
        return web.json_response(
            {"count": len(found), "max_model_len": self.max_model_len, "tokens": []}
        )
