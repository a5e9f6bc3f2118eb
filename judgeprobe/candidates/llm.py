"""LLM-written texts (summaries, paraphrases, style attacks) through the judge engine.

Every text is one engine request, so it is cached in the build's SQLite store and a rerun or
resumed build sends only what is missing. Each text carries its provenance: generator,
template and hash, decoding parameters, seed and the server fingerprint.

A reply cut off at ``max_tokens`` (small models often run on) is kept up to its last complete
sentence (or word) and marked ``"truncated": true`` in its parameters, rather than re-asked at
full cost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

from judgeprobe.engine.cached import CachedAsker
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.request import Sampling
from judgeprobe.engine.store import Result, Store
from judgeprobe.prompts import load_template

_OPENING = re.compile(r'\s*\{\s*"text"\s*:\s*"')
_SENTENCE_END = re.compile(r"[.!?](?=\s|\\n|$)")


def salvage(raw: str) -> str:
    """Salvage the text of a ``{"text": "...`` reply cut off mid-string.

    Keeps up to its last full sentence, or its last whole word when not even one sentence is
    complete ("" if nothing usable).
    """
    opening = _OPENING.match(raw)
    if opening is None:
        return ""
    body = raw[opening.end() :]
    ends = [m.end() for m in _SENTENCE_END.finditer(body)]
    cut = ends[-1] if ends else body.rfind(" ")
    try:
        text = str(orjson.loads(f'"{body[: max(cut, 0)]}"')).strip()
    except orjson.JSONDecodeError:
        return ""
    return text if len(text.split()) >= 3 else ""


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
    """Writes one document's texts with one endpoint; ``None`` when a request ended Invalid.

    It keeps what the document cost (every request's result) and which requests gave no text,
    by template and seed, so the document's outcome can say why it has no summary.
    """

    def __init__(self, endpoint: Endpoint, store: Store) -> None:
        self.endpoint = endpoint
        self.store = store
        self.results: list[Result] = []
        self.failed: dict[tuple[str, int], Result] = {}

    @property
    def fingerprint(self) -> str:
        """The author server's fingerprint, recorded with each generated summary."""
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
        self.results.append(result)
        reply = result.reply_as(TextReply)
        text = reply.text.strip() if reply else ""
        truncated = result.status != "valid" and result.finish_reason == "length"
        if truncated:
            text = salvage(result.raw)
        if not text:
            self.failed[(tpl.name, seed)] = result
            return None
        params = {
            "template": tpl.name,
            "template_hash": tpl.sha256[:16],
            "temperature": temperature,
            "seed": seed,
            "max_tokens": max_tokens,
            "model": self.endpoint.info.model,
        }
        if truncated:
            params["truncated"] = True
        return Text(text, f"llm:{self.endpoint.judge.name}", params)
