"""Start-up probe: every endpoint must be reachable, name its model, and return
schema-conforming JSON to one tiny request, or the sweep refuses to start with one line.

The server fingerprint (backend, version, model, build) goes into every request key, so a
changed model or server build never reuses another's cached verdicts. Every replica of a
judge is probed and must show the same fingerprint: replicas serve one model, one build.
"""

from __future__ import annotations

import hashlib
from typing import Any

import openai
import orjson
from pydantic import BaseModel, ConfigDict

from judgeprobe import JudgeprobeError
from judgeprobe.config import EngineConfig, JudgeConfig
from judgeprobe.engine.client import Endpoint, ServerInfo
from judgeprobe.engine.request import Request, Sampling
from judgeprobe.engine.retry import describe
from judgeprobe.engine.wire import declared


class ProbeReply(BaseModel):
    model_config = ConfigDict(extra="forbid", title="probe")

    ok: bool


async def _get_json(client: openai.AsyncOpenAI, path: str) -> Any:
    """GET a JSON document relative to the server root; None when absent or not JSON."""
    try:
        return await client.get(path, cast_to=object)
    except (openai.APIError, ValueError):
        return None


async def _detect(client: openai.AsyncOpenAI, models: list[Any]) -> tuple[str, dict[str, Any]]:
    """Which server is this, and the details that identify its build."""
    props = await _get_json(client, "/props")
    if isinstance(props, dict) and (
        "build_info" in props or "default_generation_settings" in props
    ):
        return "llama-server", {
            "build_info": props.get("build_info", ""),
            "model_file": str(props.get("model_path", "")).rsplit("/", 1)[-1],
        }
    info = await _get_json(client, "/info")
    if isinstance(info, dict) and "model_id" in info:
        keep = ("model_id", "model_sha", "model_dtype", "version", "sha")
        return "tgi", {k: info.get(k) for k in keep}
    version = await _get_json(client, "/version")
    if isinstance(version, dict) and "version" in version:
        return "vllm", {"version": version["version"]}
    if models and isinstance(models[0], dict) and models[0].get("owned_by") == "me":
        return "llama-cpp-python", {}
    return "openai", {}


async def _list_models(client: openai.AsyncOpenAI, judge: JudgeConfig, url: str) -> list[Any]:
    try:
        listing = await client.get("/v1/models", cast_to=object)
    except openai.APIStatusError as exc:
        raise JudgeprobeError(
            f"judge {judge.name}: {url}/models answered HTTP {exc.status_code}; "
            "is this an OpenAI-compatible server (URL ending in /v1)?"
        ) from None
    except openai.APIError as exc:
        raise JudgeprobeError(
            f"judge {judge.name}: cannot reach {url} ({describe(exc)}); {judge.serve_hint()}"
        ) from None
    except ValueError:
        listing = None
    if not isinstance(listing, dict) or not isinstance(listing.get("data"), list):
        raise JudgeprobeError(f"judge {judge.name}: {url}/models is not an OpenAI model list")
    return list(listing["data"])


def server_info(backend: str, model: str, details: dict[str, Any]) -> ServerInfo:
    """Identity of a server build; its fingerprint goes into every request key."""
    ident = {"backend": backend, "model": model, **details}
    fingerprint = hashlib.sha256(orjson.dumps(ident, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]
    return ServerInfo(backend=backend, model=model, fingerprint=fingerprint, details=ident)


async def _identify(judge: JudgeConfig, engine: EngineConfig, url: str) -> ServerInfo:
    """What one replica serves."""
    client = openai.AsyncOpenAI(
        base_url=url.removesuffix("/v1"),
        api_key="probe",
        max_retries=1,
        timeout=min(30.0, engine.attempt_timeout_s),
    )
    try:
        models = await _list_models(client, judge, url)
        ids = [str(m.get("id")) for m in models if isinstance(m, dict)]
        if judge.model and judge.model not in ids:
            raise JudgeprobeError(
                f"judge {judge.name}: model {judge.model!r} not served at {url} "
                f"(it serves {', '.join(ids) or 'nothing'})"
            )
        if not ids:
            raise JudgeprobeError(f"judge {judge.name}: {url} serves no model")
        model = judge.model or ids[0]
        detected, details = await _detect(client, models)
    finally:
        await client.close()
    details |= declared(judge.batch_invariant)
    return server_info(detected if judge.backend == "auto" else judge.backend, model, details)


async def probe_endpoint(judge: JudgeConfig, engine: EngineConfig) -> Endpoint:
    """Check one judge (every replica) and return it ready to use; else raise one line."""
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
    await _check_schema(endpoint)
    return endpoint


async def _check_schema(endpoint: Endpoint) -> None:
    req = Request(
        endpoint=endpoint.judge.name,
        messages=(
            {
                "role": "user",
                "content": 'Reply with the JSON object {"ok": true} and nothing else.',
            },
        ),
        schema_name="probe",
        schema=ProbeReply.model_json_schema(),
        reply_model=ProbeReply,
        sampling=Sampling(max_tokens=16),
        seed=0,
        fingerprint=endpoint.info.fingerprint,
    )
    original = endpoint.engine
    endpoint.engine = original.model_copy(update={"max_reasks": 0, "max_attempts": 2})
    try:
        result = await endpoint.execute(req)
    finally:
        endpoint.engine = original
    if result.status != "valid":
        await endpoint.close()
        raise JudgeprobeError(
            f"judge {endpoint.judge.name} at {endpoint.judge.url} failed the structured-output "
            f"check ({result.invalid_reason}; backend {endpoint.info.backend}); "
            "set backend= in the config if it was detected wrongly"
        )
