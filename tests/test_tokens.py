"""The builder's token counter asks llama-server's tokenizer with the judge's credentials."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest
from aiohttp import web

from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.engine.tokenizer import TokenCounter
from judgeprobe.selftest.loopback import LoopbackServer

KEY = "sk-tokenizer-test-1234"


class KeyedLlamaServer(LoopbackServer):
    """``/tokenize`` and ``/props`` as llama-server answers them, for the right key only."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/tokenize", self._tokenize)
        app.router.add_get("/props", self._props)
        return app

    def _allowed(self, request: web.Request) -> bool:
        self.seen.append(request.headers.get("Authorization", ""))
        return request.headers.get("Authorization") == f"Bearer {KEY}"

    async def _tokenize(self, request: web.Request) -> web.Response:
        if not self._allowed(request):
            return web.json_response({"error": "invalid api key"}, status=401)
        body = await request.json()
        return web.json_response({"tokens": list(range(len(body["content"].split())))})

    async def _props(self, request: web.Request) -> web.Response:
        if not self._allowed(request):
            return web.json_response({"error": "invalid api key"}, status=401)
        return web.json_response({"default_generation_settings": {"n_ctx": 4096}})


def _endpoint(url: str) -> Endpoint:
    """What TokenCounter reads of an endpoint: its judge and the probed backend."""
    judge = JudgeConfig(name="keyed", url=url, api_key_env="JP_TOKENIZER_KEY")
    return cast(
        Endpoint, SimpleNamespace(judge=judge, info=SimpleNamespace(backend="llama-server"))
    )


async def test_the_tokenizer_is_asked_with_the_judge_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JP_TOKENIZER_KEY", KEY)
    with KeyedLlamaServer() as server:
        counter = TokenCounter(_endpoint(server.url))
        try:
            assert await counter.count(["one two three", "four"]) == [3, 1]
            assert await counter.context_window() == 4096
        finally:
            await counter.close()
    assert server.seen == [f"Bearer {KEY}"] * 3
