"""Token counts from the judge's own tokenizer, for the length filter and the context check.

With llama-server the judge's tokenizer is used (``POST /tokenize``) and its context size per
slot comes from ``GET /props``. Elsewhere counts are the approximation of
``judgeprobe.text.tokens``. These two calls go through the openai client (with its own
retries), the one place the engine uses it; chat requests take the engine's own transport.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import openai
from pydantic import BaseModel

from judgeprobe.engine.client import Endpoint
from judgeprobe.text.tokens import APPROXIMATION, approx_tokens


class Tokenized(BaseModel):
    """llama-server's ``/tokenize`` reply: the token ids (with pieces when asked for)."""

    tokens: list[Any]


class TokenCounter:
    """Counts tokens with the endpoint's tokenizer where it has one, else approximately."""

    def __init__(self, endpoint: Endpoint | None) -> None:
        self._client: openai.AsyncOpenAI | None = None
        if endpoint is not None and endpoint.info.backend == "llama-server":
            judge = endpoint.judge
            root = judge.url.removesuffix("/v1")
            # The judge's own credentials (its key, or the URL's user:password): a server that
            # demands them for chat demands them here too.
            self._client = openai.AsyncOpenAI(
                base_url=root, api_key="none", max_retries=2,
                default_headers=judge.auth_headers(judge.url),
            )  # fmt: skip
        self.method = "judge tokenizer" if self._client else f"approximation ({APPROXIMATION})"

    async def _post(self, path: str, body: dict[str, Any]) -> Any:
        assert self._client is not None
        return await self._client.post(path, body=body, cast_to=object)

    async def count(self, texts: Sequence[str]) -> list[int]:
        """Token counts from the server's tokenizer, or an estimate when there is none."""
        if self._client is None:
            return [approx_tokens(t) for t in texts]
        slots = asyncio.Semaphore(8)

        async def one(text: str) -> int:
            async with slots:
                reply = await self._post("/tokenize", {"content": text, "add_special": False})
            return len(Tokenized.model_validate(reply).tokens)

        return list(await asyncio.gather(*(one(t) for t in texts)))

    async def context_window(self) -> int | None:
        """The judge's context size per request, when the server says it."""
        if self._client is None:
            return None
        try:
            props = await self._client.get("/props", cast_to=object)
        except (openai.APIError, ValueError):
            return None
        settings = props.get("default_generation_settings") if isinstance(props, dict) else None
        n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
        return int(n_ctx) if isinstance(n_ctx, int) else None

    async def close(self) -> None:
        """Release the tokenizer client's connections."""
        if self._client is not None:
            await self._client.close()
