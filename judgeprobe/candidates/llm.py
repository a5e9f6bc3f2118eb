"""LLM-written texts (summaries, paraphrases, style attacks) through the judge engine.

Every text is one engine request, so it is cached in the build's SQLite store and a rerun or
resumed build sends only what is missing. Each text carries its provenance: generator,
template and hash, decoding parameters, seed and the server fingerprint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.request import Sampling
from judgeprobe.engine.session import CachedAsker
from judgeprobe.engine.store import Store
from judgeprobe.prompts import load_template


class TextReply(BaseModel):
    """What every generation prompt asks for."""

    model_config = ConfigDict(extra="forbid", title="text")

    text: str = Field(min_length=1)


@dataclass(frozen=True, slots=True)
class Text:
    """A candidate text and how it was made."""

    text: str
    generator: str
    params: dict[str, Any] = field(default_factory=dict)


class Author:
    """Writes texts with one endpoint; ``None`` when the request ended Invalid."""

    def __init__(self, endpoint: Endpoint, store: Store) -> None:
        self.endpoint = endpoint
        self.store = store
        self.invalid = 0

    @property
    def fingerprint(self) -> str:
        return self.endpoint.info.fingerprint

    async def write(
        self,
        template: str,
        values: dict[str, str],
        *,
        temperature: float,
        seed: int,
        max_tokens: int,
    ) -> Text | None:
        """Fill ``template`` with ``values`` and ask for ``{"text": ...}``."""
        tpl = load_template(template)
        sampling = Sampling(temperature=temperature, max_tokens=max_tokens)
        asker = CachedAsker(self.endpoint, self.store, sampling, seed)
        result = await asker([{"role": "user", "content": tpl.fill(values)}], TextReply, max_tokens)
        text = str(result.reply["text"]).strip() if result.reply else ""
        if result.status != "valid" or not text:
            self.invalid += 1
            return None
        params = {
            "template": tpl.name,
            "template_hash": tpl.sha256[:16],
            "temperature": temperature,
            "seed": seed,
            "max_tokens": max_tokens,
            "model": self.endpoint.info.model,
        }
        return Text(text, f"llm:{self.endpoint.judge.name}", params)
