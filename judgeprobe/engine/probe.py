"""Start-up probe.

Every endpoint must be reachable, name its model, and answer one tiny request, or the sweep
refuses to start with one line. What that request checks is what the sweep will send: a judge
that will be sent a JSON schema (a built-in protocol, an own JSON verdict or score) must return
schema-conforming JSON; a judge whose every request reads free text (an own pattern verdict or
score) must only reply, so a server without structured output, or a proxy that drops
``response_format``, can still be audited with the verdicts its users read.

The probe asks with the judge's own credentials (a refusal names the variable, never the
key), checks that the URL is the API base (``…/v1``), and its schema requires a field the
prompt never names, so only a server that enforces ``response_format`` passes.

A judge read from log-probabilities (``protocols.logprobs``) is probed once more: a one-token
request that asks for them must come back with the first token's top log-probabilities, or
the sweep refuses to start with one line (a server that drops the field would otherwise make
every judgment Invalid).

The server fingerprint (backend, version, model, build) goes into every request key, so a
changed model or server build never reuses another's cached verdicts. Every replica of a
judge is probed and must show the same fingerprint: replicas serve one model, one build.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import aiohttp
import orjson
from pydantic import BaseModel, ConfigDict

from judgeprobe import JudgeprobeError
from judgeprobe.core.files import content_hash
from judgeprobe.engine.client import Endpoint, ServerInfo
from judgeprobe.engine.request import Request, Sampling
from judgeprobe.engine.retry import describe
from judgeprobe.engine.settings import EngineConfig, JudgeConfig
from judgeprobe.engine.store import Result
from judgeprobe.engine.validate import ReplyError, TextReply, TokenReply, TopTokens
from judgeprobe.engine.wire import declared

#: The probe reply's one field. The prompt never names it, so a server that ignores
#: ``response_format`` and only follows the words cannot produce it: passing the probe
#: proves the schema is enforced.
PROBE_FIELD = "probe_c7f3"
PROBE_PROMPT = "Reply with a JSON object and nothing else."


class ProbeReply(BaseModel):
    """The start-up probe's reply schema; the odd field name cannot come from a cached answer."""

    model_config = ConfigDict(extra="forbid", title="probe")

    probe_c7f3: bool


#: The text probe's prompt: any reply at all passes (the sweep reads the judge's own text).
TEXT_PROBE_PROMPT = "Reply with the word ready."


class TextProbeReply(TextReply):
    """The text probe's reply: any non-empty text (no ``response_format`` is sent)."""

    key_schema: ClassVar[dict[str, Any]] = {"title": "probe_text"}
    text: str

    @classmethod
    def from_text(cls, body: str, finish_reason: str | None) -> TextProbeReply:
        """Any text passes: the sweep reads this judge's text by its own rule."""
        return cls(text=body)


async def _get(session: aiohttp.ClientSession, url: str) -> tuple[int, Any]:
    """GET ``url``: the status and the body as JSON (None when it is not JSON)."""
    async with session.get(url) as resp:
        raw = await resp.read()
    try:
        return resp.status, orjson.loads(raw)
    except orjson.JSONDecodeError:
        return resp.status, None


async def _get_json(session: aiohttp.ClientSession, url: str) -> Any:
    """The JSON document at ``url``; None when absent, refused or not JSON."""
    try:
        status, data = await _get(session, url)
    except (aiohttp.ClientError, TimeoutError):
        return None
    return data if status == 200 else None


async def _detect(
    session: aiohttp.ClientSession, root: str, models: list[Any]
) -> tuple[str, dict[str, Any]]:
    """Which server is this, and the details that identify its build."""
    props = await _get_json(session, f"{root}/props")
    if isinstance(props, dict) and (
        "build_info" in props or "default_generation_settings" in props
    ):
        details = {
            "build_info": props.get("build_info", ""),
            "model_file": str(props.get("model_path", "")).rsplit("/", 1)[-1],
        }
        # xllamacpp's wheels report build_info "b0-unknown" and name their build in the
        # model's tags instead (servers/embedded.py sets them), so a new build changes keys.
        tags = models[0].get("tags") if models and isinstance(models[0], dict) else None
        if tags:
            details["tags"] = sorted(str(t) for t in tags)
        return "llama-server", details
    info = await _get_json(session, f"{root}/info")
    if isinstance(info, dict) and "model_id" in info:
        keep = ("model_id", "model_sha", "model_dtype", "version", "sha")
        return "tgi", {k: info.get(k) for k in keep}
    version = await _get_json(session, f"{root}/version")
    if isinstance(version, dict) and "version" in version:
        return "vllm", {"version": version["version"]}
    if models and isinstance(models[0], dict) and models[0].get("owned_by") == "me":
        return "llama-cpp-python", {}
    return "openai", {}


def refused(judge: JudgeConfig, url: str, status: int) -> JudgeprobeError:
    """The error for a 401/403: which credentials were refused, never what they were."""
    if judge.api_key_env:
        what = f"refused the API key from ${judge.api_key_env}"
    elif url in judge.url_credentials:
        what = "refused the credentials in its URL"
    else:
        what = "requires an API key: set api_key_env to the variable that holds it"
    return JudgeprobeError(f"judge {judge.name}: the server at {url} {what} (HTTP {status})")


def _is_model_list(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("data"), list)


async def _list_models(session: aiohttp.ClientSession, judge: JudgeConfig, url: str) -> list[Any]:
    """The models at ``URL/models``, where the engine will find its API; else one line."""
    try:
        status, listing = await _get(session, f"{url}/models")
        if status in (401, 403):
            raise refused(judge, url, status)
        if status != 200 and not url.endswith("/v1"):
            # A server root given instead of its API base: say so, not "structured output".
            found, below = await _get(session, f"{url}/v1/models")
            if found == 200 and _is_model_list(below):
                raise JudgeprobeError(
                    f"judge {judge.name}: {url} is not the API's base URL ({url}/models "
                    f"answered HTTP {status}, {url}/v1/models lists models); use {url}/v1"
                )
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise JudgeprobeError(
            f"judge {judge.name}: cannot reach {url} ({describe(exc)}); {judge.serve_hint()}"
        ) from None
    if status != 200:
        raise JudgeprobeError(
            f"judge {judge.name}: {url}/models answered HTTP {status}; "
            "is this an OpenAI-compatible server (URL ending in /v1)?"
        )
    if not _is_model_list(listing):
        raise JudgeprobeError(f"judge {judge.name}: {url}/models is not an OpenAI model list")
    return list(listing["data"])


def server_info(backend: str, model: str, details: dict[str, Any]) -> ServerInfo:
    """Identity of a server build; its fingerprint goes into every request key."""
    ident = {"backend": backend, "model": model, **details}
    fingerprint = content_hash(ident, 16)
    return ServerInfo(backend=backend, model=model, fingerprint=fingerprint, details=ident)


async def _identify(judge: JudgeConfig, engine: EngineConfig, url: str) -> ServerInfo:
    """What one replica serves, asked with the judge's own credentials."""
    session = aiohttp.ClientSession(
        headers=judge.auth_headers(url),
        timeout=aiohttp.ClientTimeout(total=min(30.0, engine.attempt_timeout_s)),
    )
    try:
        models = await _list_models(session, judge, url)
        ids = [str(m.get("id")) for m in models if isinstance(m, dict)]
        if judge.model and judge.model not in ids:
            raise JudgeprobeError(
                f"judge {judge.name}: model {judge.model!r} not served at {url} "
                f"(it serves {', '.join(ids) or 'nothing'})"
            )
        if not ids:
            raise JudgeprobeError(f"judge {judge.name}: {url} serves no model")
        model = judge.model or ids[0]
        detected, details = await _detect(session, url.removesuffix("/v1"), models)
    finally:
        await session.close()
    details |= declared(batch_invariant=judge.batch_invariant)
    return server_info(detected if judge.backend == "auto" else judge.backend, model, details)


async def probe_endpoint(
    judge: JudgeConfig, engine: EngineConfig, *, schema: bool = True
) -> Endpoint:
    """Check one judge (every replica) and return it ready to use; else raise one line.

    ``schema``: whether the sweep will send this judge a JSON schema, so its enforcement is
    checked; False probes for a reply only (every request the judge gets reads free text).
    """
    for url in judge.replicas:  # a missing key is an error before anything is sent
        judge.auth_headers(url)
    infos = [await _identify(judge, engine, url) for url in judge.replicas]
    info = infos[0]
    for url, other in zip(judge.replicas[1:], infos[1:], strict=True):
        if other.fingerprint != info.fingerprint:
            raise JudgeprobeError(
                f"judge {judge.name}: replica {url} serves {other.model} ({other.backend}, "
                f"fingerprint {other.fingerprint}) but {judge.url} serves {info.model} "
                f"({info.backend}, fingerprint {info.fingerprint}); replicas must be identical"
            )
    endpoint = Endpoint(judge, engine, info)
    await _check_reply(endpoint, schema=schema)
    if judge.reads_logprobs:
        await _check_logprobs(endpoint)
    return endpoint


async def _ask_once(
    endpoint: Endpoint,
    prompt: str,
    schema_name: str,
    schema: dict[str, Any],
    model: type[BaseModel],
    *,
    max_tokens: int,
) -> Result:
    """One probe request: sent at most twice, never re-asked (a probe that fails says so)."""
    req = Request(
        endpoint=endpoint.judge.name,
        messages=({"role": "user", "content": prompt},),
        schema_name=schema_name,
        schema=schema,
        reply_model=model,
        sampling=Sampling(max_tokens=max_tokens),
        seed=0,
        fingerprint=endpoint.info.fingerprint,
    )
    original = endpoint.engine
    endpoint.engine = original.model_copy(update={"max_reasks": 0, "max_attempts": 2})
    try:
        return await endpoint.execute(req)
    finally:
        endpoint.engine = original


#: The HTTP status in a transport failure's reason (``transport: HTTP 401: ...``).
_STATUS = re.compile(r"transport: HTTP (\d{3})")


async def _check_reply(endpoint: Endpoint, *, schema: bool) -> None:
    """One tiny request, refused in one line when it fails.

    With ``schema`` its reply must carry a field only the schema names; without, any text
    passes (a judge the sweep sends no schema).
    """
    model: type[BaseModel] = ProbeReply if schema else TextProbeReply
    result = await _ask_once(
        endpoint,
        PROBE_PROMPT if schema else TEXT_PROBE_PROMPT,
        "probe" if schema else "probe_text",
        ProbeReply.model_json_schema() if schema else TextProbeReply.key_schema,
        model,
        max_tokens=24,
    )
    if result.status == "valid":
        return
    await endpoint.close()
    judge, url = endpoint.judge, endpoint.judge.url
    found = _STATUS.search(result.invalid_reason)
    status = int(found.group(1)) if found else 0
    if status in (401, 403):
        raise refused(judge, url, status)
    if status in (404, 405):
        raise JudgeprobeError(
            f"judge {judge.name}: {url}/chat/completions answered HTTP {status}: no "
            "chat-completions API there (the URL must be the API base, usually ending in /v1)"
        )
    if result.invalid_reason.startswith("transport:"):
        raise JudgeprobeError(
            f"judge {judge.name} at {url}: the probe request failed ({result.invalid_reason})"
        )
    if not schema:
        raise JudgeprobeError(
            f"judge {judge.name} at {url}: the probe request got no usable reply "
            f"({result.invalid_reason}; backend {endpoint.info.backend})"
        )
    raise JudgeprobeError(
        f"judge {judge.name} at {url} failed the structured-output check "
        f"({result.invalid_reason}; backend {endpoint.info.backend}): it does not enforce "
        "the JSON schema it is sent; set backend= in the config if it was detected wrongly"
    )


LOGPROB_PROMPT = "Reply with one word."


class LogprobProbe(TokenReply):
    """The log-probability probe's reply: any first token, as long as its top list came back."""

    key_schema: ClassVar[dict[str, Any]] = {"title": "probe_logprobs"}
    tokens: int

    @classmethod
    def from_logprobs(cls, top: TopTokens | None, text: str) -> LogprobProbe:
        """How many top tokens came back; ReplyError when none did."""
        if not top:
            raise ReplyError("no log-probabilities in the reply", final=True)
        return cls(tokens=len(top))


async def _check_logprobs(endpoint: Endpoint) -> None:
    """One one-token request asking for log-probabilities; refused in one line without them."""
    result = await _ask_once(
        endpoint,
        LOGPROB_PROMPT,
        "probe_logprobs",
        LogprobProbe.key_schema,
        LogprobProbe,
        max_tokens=1,
    )
    if result.status == "valid":
        return
    await endpoint.close()
    judge, url, backend = endpoint.judge, endpoint.judge.url, endpoint.info.backend
    if result.invalid_reason.startswith("transport:"):
        raise JudgeprobeError(
            f"judge {judge.name} at {url}: the log-probability probe failed "
            f"({result.invalid_reason})"
        )
    raise JudgeprobeError(
        f"judge {judge.name} at {url} returns no log-probabilities (backend {backend}), and its "
        "verdict is read from them: serve it on llama-server, vLLM or TGI (or set backend= if "
        "it was detected wrongly)"
    )
