"""A fake Hugging Face TGI 3.3 server that validates requests as TGI does (no GPU needed).

Every rule below is copied from text-generation-inference at tag v3.3.6 (identical in
v3.3.0 and v3.3.7 for everything used here); the model's output is the fake part: a reply
that conforms to the requested grammar, chosen by a hash of the prompt.

``router/src/lib.rs``
  * ``ChatRequest`` is deserialised by serde without ``deny_unknown_fields``: an unknown
    field (``repetition_penalty``, ``chat_template_kwargs``, ``guided_json`` …) is dropped
    silently. Types: ``temperature``/``top_p``/``presence_penalty``/``frequency_penalty``
    f32, ``max_tokens`` (alias ``max_completion_tokens``) u32, ``seed`` u64, ``stop`` a list.
  * ``GrammarType`` (``response_format``) is tagged ``{"type": …, "value": …}``: ``json``
    (alias ``json_object``) with a schema, ``regex`` with a string, ``json_schema`` with
    ``{"name"?, "schema"}``. OpenAI's ``{"type": "json_schema", "json_schema": …}`` lacks
    ``value`` and fails to deserialise.
  * ``logprobs`` (bool) and ``top_logprobs`` (u32, handed on as ``top_n_tokens``); the reply's
    ``choice.logprobs`` is OpenAI's form (``ChatCompletionLogprobs`` from the generated tokens
    and their top tokens) when ``logprobs`` is true, else null.
  * ``try_into_generate``: temperature exactly 0 → greedy (``do_sample`` false, temperature
    unset); ``repetition_penalty = presence_penalty + 2``; ``response_format`` and ``tools``
    are exclusive; the request's ``model`` only names a LoRA adapter.
``router/src/validation.rs`` ``Validation::validate`` / ``validate_input``
  * ``top_n_tokens`` ≤ ``max_top_n_tokens`` (the launcher's ``--max-top-n-tokens``, default
    5): "`top_n_tokens` must be >= 0 and <= 5. Given: N";
  * temperature (default 1.0) > 0; repetition_penalty (default 1.0) > 0;
    −2 ≤ frequency_penalty ≤ 2; ``top_p`` when given 0 < top_p < 1 ("`top_p` must be > 0.0
    and < 1.0"); ``max_new_tokens`` ≠ 0; at most ``max_stop_sequences`` stop strings.
  * input + min(max_new_tokens, 1024) ≤ ``max_total_tokens`` (checked first), then
    input ≤ ``max_input_tokens``.
  * a JSON grammar must be a valid JSON Schema (draft 2020-12 meta-schema) with a top-level
    ``properties`` field.
``router/src/server.rs``
  * validation, template and tool errors: HTTP 422 ``{"error": "Input validation error: …",
    "error_type": "validation"}``; a body that does not deserialise: axum's 422 plain text.
  * ``GET /info`` (``max_input_tokens``, ``max_total_tokens``, ``version`` …),
    ``GET /v1/models`` (one model, ``id`` = ``owned_by`` = model id), ``GET /health``,
    ``POST /chat_tokenize`` (the chat template applied and tokenised, no validation);
    no ``/props`` or ``/version`` (404). A finished reply's ``finish_reason`` is ``stop``.

The fake's tokenizer counts words and punctuation marks (never more tokens than UTF-8
bytes, as byte-level BPE), and its chat template is ``<|role|>`` lines.
"""

from __future__ import annotations

import re
import time
from typing import Any

import orjson
from aiohttp import web
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from tests.fakeserver import FakeJudge, reply_for

DEFAULT_GENERATION_LENGTH = 1024  # validation.rs: the first chunk of max_new_tokens
U32, U64 = 2**32 - 1, 2**64 - 1


class Rejected(Exception):
    """TGI answers the request with an error."""

    def __init__(
        self, message: str, error_type: str = "validation", *, plain: bool = False
    ) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.plain = plain  # axum's deserialisation rejection: plain text, not JSON


def tokens(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text)


def _deserialize_error(path: str, what: str) -> Rejected:
    return Rejected(
        f"Failed to deserialize the JSON body into the target type: {path}: {what}", plain=True
    )


def _number(body: dict[str, Any], key: str) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _deserialize_error(key, f"invalid type: {value!r}, expected f32")
    return float(value)


def _unsigned(body: dict[str, Any], key: str, top: int) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        raise _deserialize_error(key, f"invalid value: {value!r}, expected u{top.bit_length()}")
    return value


def _grammar(fmt: Any) -> tuple[str, Any] | None:
    """``GrammarType``: (type, value), after serde's checks."""
    if fmt is None:
        return None
    if not isinstance(fmt, dict) or "type" not in fmt:
        raise _deserialize_error("response_format", "missing field `type`")
    kind = fmt["type"]
    if kind not in ("json", "json_object", "regex", "json_schema"):
        raise _deserialize_error(
            "response_format",
            f"unknown variant `{kind}`, expected one of `json`, `json_object`, `regex`, "
            "`json_schema`",
        )
    if "value" not in fmt:
        raise _deserialize_error("response_format", "missing field `value`")
    value = fmt["value"]
    if kind == "regex" and not isinstance(value, str):
        raise _deserialize_error("response_format.value", "expected a string")
    if kind == "json_schema" and (not isinstance(value, dict) or "schema" not in value):
        raise _deserialize_error("response_format.value", "missing field `schema`")
    return ("json" if kind == "json_object" else kind), value


def _schema(kind: str, value: Any) -> dict[str, Any] | None:
    """The JSON schema a grammar constrains to (validation.rs), or None for a regex."""
    if kind == "regex":
        return None
    schema = value["schema"] if kind == "json_schema" else value
    if kind == "json" and isinstance(schema, str):
        try:
            schema = orjson.loads(schema)
        except orjson.JSONDecodeError as exc:
            raise Rejected(f"Input validation error: grammar is not valid: {exc}") from None
    if not isinstance(schema, dict):
        raise Rejected("Input validation error: grammar is not supported")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise Rejected(f"Input validation error: grammar is not valid: {exc.message}") from None
    if "properties" not in schema:
        raise Rejected(
            "Input validation error: grammar is not valid: Grammar must have a 'properties' field"
        )
    return schema


class FakeTGI(FakeJudge):
    """TGI's HTTP API on loopback; ``received`` holds the parameters of every accepted
    generation as TGI's router hands them on, ``rejected`` every error it answered."""

    def __init__(
        self,
        model_id: str = "Qwen/Qwen2.5-7B-Instruct",
        max_input_tokens: int = 7168,
        max_total_tokens: int = 8192,
        version: str = "3.3.6",
    ) -> None:
        super().__init__()
        self.model_id = model_id
        self.max_input_tokens = max_input_tokens
        self.max_total_tokens = max_total_tokens
        self.version = version
        self.received: list[dict[str, Any]] = []
        self.rejected: list[str] = []
        self.tokenized = 0
        self.max_top_n_tokens = 5  # the launcher's --max-top-n-tokens default

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/info", self._info)
        app.router.add_get("/health", self._health)
        app.router.add_get("/v1/models", self._tgi_models)
        app.router.add_post("/v1/chat/completions", self._tgi_chat)
        app.router.add_post("/chat_tokenize", self._chat_tokenize)
        return app

    async def _info(self, _: web.Request) -> web.Response:
        return web.json_response(
            {
                "model_id": self.model_id,
                "model_sha": "a09a35458c702b33eeacc393d103063234e8bc28",
                "model_pipeline_tag": "text-generation",
                "max_concurrent_requests": 128,
                "max_best_of": 2,
                "max_stop_sequences": 4,
                "max_input_tokens": self.max_input_tokens,
                "max_total_tokens": self.max_total_tokens,
                "validation_workers": 2,
                "max_client_batch_size": 4,
                "router": "text-generation-router",
                "version": self.version,
                "sha": "fake",
                "docker_label": "sha-fake",
            }
        )

    async def _health(self, _: web.Request) -> web.Response:
        return web.Response()

    async def _tgi_models(self, _: web.Request) -> web.Response:
        card = {"id": self.model_id, "object": "model", "created": 0, "owned_by": self.model_id}
        return web.json_response({"object": "list", "data": [card]})

    def _template(self, body: dict[str, Any]) -> str:
        """Deserialise the messages and apply the fake chat template."""
        messages = body.get("messages")
        if not isinstance(messages, list):
            raise _deserialize_error("messages", "missing field `messages`")
        lines = []
        for i, m in enumerate(messages):
            if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                raise _deserialize_error(f"messages[{i}]", "missing field `role`")
            content = m.get("content")
            if not isinstance(content, str | list):
                raise _deserialize_error(f"messages[{i}]", "data did not match any variant")
            text = content if isinstance(content, str) else " ".join(
                str(c.get("text", "")) for c in content if isinstance(c, dict)
            )  # fmt: skip
            lines.append(f"<|{m['role']}|>\n{text}")
        return "\n".join([*lines, "<|assistant|>\n"])

    def _generate_request(self, body: dict[str, Any]) -> dict[str, Any]:
        """``ChatRequest`` deserialisation and ``try_into_generate``."""
        if "max_tokens" in body and "max_completion_tokens" in body:
            raise _deserialize_error("max_tokens", "duplicate field `max_tokens`")
        temperature = _number(body, "temperature")
        top_p = _number(body, "top_p")
        presence = _number(body, "presence_penalty")
        frequency = _number(body, "frequency_penalty")
        max_new = _unsigned(body, "max_tokens", U32)
        if max_new is None:
            max_new = _unsigned(body, "max_completion_tokens", U32)
        seed = _unsigned(body, "seed", U64)
        top_n = _unsigned(body, "top_logprobs", U32)
        stop = body.get("stop") or []
        grammar = _grammar(body.get("response_format"))
        inputs = self._template(body)
        if grammar is not None and body.get("tools") is not None:
            raise Rejected("Tool error: Grammar and tools are mutually exclusive", "tool_error")
        greedy = temperature == 0.0
        return {
            "inputs": inputs,
            "do_sample": not greedy,
            "temperature": None if greedy else temperature,
            "top_p": top_p,
            "repetition_penalty": None if presence is None else presence + 2.0,
            "frequency_penalty": frequency,
            "max_new_tokens": max_new,
            "seed": seed,
            "stop": stop,
            "grammar": grammar,
            "top_n_tokens": top_n,
        }

    def _validate(self, gen: dict[str, Any]) -> dict[str, Any]:
        """``Validation::validate``: the parameters the model is run with."""
        temperature = 1.0 if gen["temperature"] is None else gen["temperature"]
        if temperature <= 0.0:
            raise Rejected("Input validation error: `temperature` must be strictly positive")
        penalty = 1.0 if gen["repetition_penalty"] is None else gen["repetition_penalty"]
        if penalty <= 0.0:
            raise Rejected("Input validation error: `repetition_penalty` must be strictly positive")
        frequency = 0.0 if gen["frequency_penalty"] is None else gen["frequency_penalty"]
        if not -2.0 <= frequency <= 2.0:
            raise Rejected("Input validation error: `frequency_penalty` must be >= -2.0 and <= 2.0")
        top_p = gen["top_p"]
        if top_p is not None and (top_p <= 0.0 or top_p >= 1.0):
            raise Rejected("Input validation error: `top_p` must be > 0.0 and < 1.0")
        top_n = gen["top_n_tokens"] or 0
        if top_n > self.max_top_n_tokens:
            raise Rejected(
                f"Input validation error: `top_n_tokens` must be >= 0 and <= "
                f"{self.max_top_n_tokens}. Given: {top_n}"
            )
        if gen["max_new_tokens"] == 0:
            raise Rejected("Input validation error: `max_new_tokens` must be strictly positive")
        if len(gen["stop"]) > 4:
            raise Rejected(
                f"Input validation error: `stop` supports up to 4 stop sequences. "
                f"Given: {len(gen['stop'])}"
            )
        if not gen["inputs"]:
            raise Rejected("Input validation error: `inputs` cannot be empty")
        n_input = len(tokens(gen["inputs"]))
        asked = gen["max_new_tokens"]
        if asked is None:
            asked = max(0, self.max_total_tokens - n_input)
        chunk = min(asked, DEFAULT_GENERATION_LENGTH)
        if n_input + chunk > self.max_total_tokens:
            raise Rejected(
                f"Input validation error: `inputs` tokens + `max_new_tokens` must be <= "
                f"{self.max_total_tokens}. Given: {n_input} `inputs` tokens and {chunk} "
                "`max_new_tokens`"
            )
        if n_input > self.max_input_tokens:
            raise Rejected(
                f"Input validation error: `inputs` must have less than {self.max_input_tokens} "
                f"tokens. Given: {n_input}"
            )
        grammar = gen["grammar"]
        schema = _schema(*grammar) if grammar is not None else None
        return {
            "do_sample": gen["do_sample"],
            "temperature": temperature,
            "top_p": 1.0 if top_p is None else top_p,
            "repetition_penalty": penalty,
            "frequency_penalty": frequency,
            "seed": gen["seed"],
            "max_new_tokens": asked,
            "input_tokens": n_input,
            "grammar": None if grammar is None else grammar[0],
            "schema": schema,
            "top_n_tokens": top_n,
        }

    @staticmethod
    def _error(exc: Rejected) -> web.Response:
        if exc.plain:
            return web.Response(status=422, text=str(exc))
        return web.json_response({"error": str(exc), "error_type": exc.error_type}, status=422)

    async def _body(self, request: web.Request) -> dict[str, Any]:
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            raise Rejected("Failed to parse the request body as JSON", plain=True) from None
        if not isinstance(body, dict):
            raise _deserialize_error(".", "invalid type: expected struct ChatRequest")
        return body

    async def _tgi_chat(self, request: web.Request) -> web.Response:
        try:
            body = await self._body(request)
            valid = self._validate(self._generate_request(body))
        except Rejected as exc:
            self.rejected.append(str(exc))
            return self._error(exc)
        self.received.append(valid)
        schema = valid["schema"]
        prompt = orjson.dumps(body["messages"][:1]).decode()
        text = reply_for(prompt, schema) if schema is not None else "A plain reply."
        logprobs = None
        if body.get("logprobs") and self.logprobs:  # the generated token and its top tokens
            tops = [{"token": t, "logprob": lp}
                    for t, lp in self.first_tokens[: valid["top_n_tokens"]]]  # fmt: skip
            text, first = self.first_tokens[0]
            logprobs = {"content": [{"token": text, "logprob": first, "top_logprobs": tops}]}
        model = body.get("model")
        reply = {
            "object": "chat.completion",
            "id": "",
            "created": int(time.time()),
            "model": self.model_id if model in (None, "tgi") else model,
            "system_fingerprint": f"{self.version}-sha-fake",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "logprobs": logprobs,
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": valid["input_tokens"],
                "completion_tokens": len(tokens(text)),
                "total_tokens": valid["input_tokens"] + len(tokens(text)),
            },
        }
        return web.Response(body=orjson.dumps(reply), content_type="application/json")

    async def _chat_tokenize(self, request: web.Request) -> web.Response:
        try:
            gen = self._generate_request(await self._body(request))
        except Rejected as exc:
            return self._error(exc)
        self.tokenized += 1
        found = [
            {"id": i, "text": t, "special": False, "start": 0, "stop": 0}
            for i, t in enumerate(tokens(gen["inputs"]))
        ]
        return web.json_response({"tokenize_response": found, "templated_text": gen["inputs"]})
