"""A request to a judge endpoint and the content key it is stored under."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from judgeprobe.core.files import content_hash


class Sampling(BaseModel):
    """Decoding parameters. Temperature 0 and a fixed seed by default: deterministic judging."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=320, ge=1)
    # Sent only when set (llama.cpp calls it repeat_penalty); left out of every dump when
    # unset, so request keys and config digests made before this field existed still match.
    repetition_penalty: float | None = Field(default=None, gt=0.0)

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("repetition_penalty") is None:
            data.pop("repetition_penalty", None)
        return data

    def determinism(self, seed: int | None, *, batch_invariant: bool = False) -> str:
        """How reproducible a reply is expected to be, recorded in the manifest.

        ``greedy``, ``seeded-sampling`` or ``unseeded-sampling``, plus ``+batch-invariant`` when the
        server computes a request alike whatever it is batched with (vLLM's VLLM_BATCH_INVARIANT=1).
        Without it, a greedy reply can still change with the batch (docs/reliability.md).
        """
        level = (
            "greedy"
            if self.temperature == 0.0
            else "seeded-sampling"
            if seed is not None
            else "unseeded-sampling"
        )
        return f"{level}+batch-invariant" if batch_invariant else level


Message = dict[str, str]


@dataclass(frozen=True, slots=True)
class Request:
    """One judge call. ``key`` hashes everything that decides the reply, nothing that doesn't.

    The key covers the messages, the reply schema, the sampling parameters, the seed and the
    server fingerprint; not the URL or API key, so a moved server keeps its cache.
    """

    endpoint: str
    messages: tuple[Message, ...]
    schema_name: str
    schema: dict[str, Any]
    reply_model: type[BaseModel]
    sampling: Sampling
    seed: int
    fingerprint: str
    # Sets a request apart from an identical one: the noise-floor repeat asks the same thing
    # again under a fresh cache key. Never sent; in the key only when set (old keys stay).
    salt: str = ""
    key: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", request_key(self))


def request_key(req: Request) -> str:
    """Content hash of everything that shapes a reply: the store's key for resume and dedup."""
    payload = {
        "messages": list(req.messages),
        "schema": req.schema,
        "sampling": req.sampling.model_dump(),
        "seed": req.seed,
        "fingerprint": req.fingerprint,
    }
    if req.salt:
        payload["salt"] = req.salt
    return content_hash(payload)
