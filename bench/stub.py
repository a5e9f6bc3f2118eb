"""A zero-latency OpenAI-compatible stub: ``python -m bench.stub PORT``.

Answers ``/v1/models``, ``/version`` (so it is taken for vLLM) and chat completions at once
with a fixed, schema-conforming verdict. It parses every request body, as a server must.
"""

from __future__ import annotations

import sys

import orjson
from aiohttp import web

from judgeprobe.engine.probe import PROBE_FIELD


def _completion(content: bytes) -> bytes:
    return (
        b'{"id":"stub","object":"chat.completion","model":"stub","choices":[{"index":0,'
        b'"message":{"role":"assistant","content":'
        + orjson.dumps(content.decode())
        + b'},"finish_reason":"stop"}],"usage":{"prompt_tokens":300,"completion_tokens":20}}'
    )


ANSWER = _completion(b'{"verdict": "[1,2]", "explanation": "Summary 1 is more complete."}')
PROBE_ANSWER = _completion(orjson.dumps({PROBE_FIELD: True}))
MODELS = {"object": "list", "data": [{"id": "stub", "object": "model", "owned_by": "bench"}]}


async def chat(request: web.Request) -> web.Response:
    """Answer every chat request at once with a fixed valid reply (the probe its own)."""
    data = orjson.loads(await request.read())
    is_probe = data["response_format"]["json_schema"]["name"] == "probe"
    return web.Response(body=PROBE_ANSWER if is_probe else ANSWER, content_type="application/json")


async def models(_: web.Request) -> web.Response:
    """The model list a start-up probe reads."""
    return web.json_response(MODELS)


async def version(_: web.Request) -> web.Response:
    """A server version, so the fingerprint has one."""
    return web.json_response({"version": "stub"})


def main() -> None:
    """Serve the stub on the port given as the only argument."""
    app = web.Application()
    app.router.add_get("/v1/models", models)
    app.router.add_get("/version", version)
    app.router.add_post("/v1/chat/completions", chat)
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)


if __name__ == "__main__":
    main()
