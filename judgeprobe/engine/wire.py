"""What each backend receives: the sampling fields of a chat request, mapped per backend.

The servers judgeprobe drives ignore a request field they do not know (TGI's ``ChatRequest``
and vLLM's request type both let unknown fields pass), so a sampling parameter sent under a
name the backend does not read is dropped without a word. Nothing is sent on hope: every
parameter is mapped to the field the backend honours, or the run is refused with one line
before anything is sent (``check_judge``). ``wire_sampling`` is the one mapping: the request
body and the manifest's record of what each backend received both come from it.

- **TGI** 3.3 (``router/src/lib.rs`` ``ChatRequest::try_into_generate`` and
  ``router/src/validation.rs``): ``top_p`` must lie in (0, 1), so 1.0, which is also TGI's
  default (no nucleus filter), is left out; temperature 0 makes it decode greedily; its chat
  API has no ``repetition_penalty`` field but sets the penalty to ``presence_penalty + 2``,
  so a penalty *p* is sent as ``presence_penalty`` = *p* − 2.
- **vLLM**: ``repetition_penalty`` is one of its own sampling parameters.
- **llama.cpp** (``llama-server``, llama-cpp-python): ``repeat_penalty``.
- **any other OpenAI-compatible server**: OpenAI's fields only; a repetition penalty has no
  OpenAI equivalent, so a run that asks for one is refused.

Log-probabilities (a verdict read from the first token's, ``protocols.logprobs``): every
backend takes OpenAI's ``logprobs: true`` and ``top_logprobs: n`` and answers in OpenAI's form;
TGI hands ``top_logprobs`` on as ``top_n_tokens``, which it refuses above its
``--max-top-n-tokens`` (default 5), and vLLM refuses more than its ``max_logprobs`` (default 20).

Seeds: a negative seed, or 2³²−1, means "random" on vLLM and llama.cpp, and TGI refuses a
negative one, so only 0 … 2³²−2 are sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from judgeprobe import JudgeprobeError
from judgeprobe.engine.request import Sampling
from judgeprobe.engine.settings import JudgeConfig

LLAMA_CPP = ("llama-server", "llama-cpp-python")
MAX_SEED = 2**32 - 2  # llama.cpp's seed is a uint32 and 2**32 - 1 means "random"
TGI_PENALTY_OFFSET = 2.0  # TGI: repetition_penalty = presence_penalty + 2.0


#: How many of the first token's most probable tokens each backend is asked for (its default cap).
TOP_LOGPROBS = {"tgi": 5}
DEFAULT_TOP_LOGPROBS = 20  # vLLM's max_logprobs, OpenAI's limit; llama.cpp takes as many


def logprob_fields(backend: str) -> dict[str, Any]:
    """The body fields that ask ``backend`` for the top log-probabilities of each reply token."""
    return {"logprobs": True, "top_logprobs": TOP_LOGPROBS.get(backend, DEFAULT_TOP_LOGPROBS)}


class UnsupportedSampling(JudgeprobeError):
    """A sampling parameter the backend cannot be made to honour."""


@dataclass(frozen=True, slots=True)
class WireSampling:
    """The sampling fields of a chat body, and how each parameter reached the backend.

    ``max_tokens`` and ``seed`` are set per request; the notes go to the manifest.
    """

    fields: dict[str, Any]
    notes: tuple[str, ...]


@cache
def wire_sampling(backend: str, sampling: Sampling) -> WireSampling:
    """How ``sampling`` is sent to ``backend``; UnsupportedSampling when it cannot be.

    Cached (the body of every request uses it): treat ``fields`` as read-only.
    """
    fields: dict[str, Any] = {"temperature": sampling.temperature, "top_p": sampling.top_p}
    notes: list[str] = []
    if backend == "tgi":
        if sampling.temperature == 0.0:
            notes.append("temperature 0: TGI decodes greedily (do_sample false)")
        if sampling.top_p >= 1.0:
            del fields["top_p"]
            notes.append(
                f"top_p {sampling.top_p} left out: TGI accepts only 0 < top_p < 1, and "
                "without it samples from the whole distribution (top_p 1.0)"
            )
    penalty = sampling.repetition_penalty
    if penalty is not None:
        if backend == "tgi":
            fields["presence_penalty"] = round(penalty - TGI_PENALTY_OFFSET, 6)
            notes.append(
                f"repetition_penalty {penalty} sent as presence_penalty "
                f"{fields['presence_penalty']}: TGI's chat API sets repetition_penalty = "
                "presence_penalty + 2"
            )
        elif backend in LLAMA_CPP:
            fields["repeat_penalty"] = penalty
            notes.append(f"repetition_penalty {penalty} sent as llama.cpp's repeat_penalty")
        elif backend == "vllm":
            fields["repetition_penalty"] = penalty
        else:
            raise UnsupportedSampling(
                f"repetition_penalty {penalty} has no OpenAI-API equivalent, so backend "
                f"{backend} would ignore it; set backend = vllm, tgi or llama-server if the "
                "server is one of those, or leave the penalty out"
            )
    return WireSampling(fields, tuple(notes))


def check_judge(judge: JudgeConfig, backend: str, sampling: Sampling, seeds: Sequence[int]) -> None:
    """Refuse, with one line, a judge whose backend would drop part of what the run asks."""
    name = judge.name
    try:
        wire_sampling(backend, sampling)
    except UnsupportedSampling as exc:
        raise UnsupportedSampling(f"judge {name}: {exc}") from None
    bad = [s for s in seeds if not 0 <= s <= MAX_SEED]
    if bad:
        raise JudgeprobeError(
            f"judge {name}: seed {bad[0]} is out of range: seeds must be 0 … {MAX_SEED} "
            "(a negative seed or 2^32-1 means 'random' on vLLM and llama.cpp; TGI refuses "
            "negative ones)"
        )
    if judge.disable_thinking and backend == "tgi":
        raise JudgeprobeError(
            f"judge {name}: disable_thinking is sent as chat_template_kwargs, which TGI 3.3 "
            "ignores; serve this judge with vLLM or llama-server, or leave it out"
        )
    if judge.batch_invariant and backend != "vllm":
        raise JudgeprobeError(
            f"judge {name}: batch_invariant is a vLLM option (VLLM_BATCH_INVARIANT=1), "
            f"but this judge's backend is {backend}"
        )


def sampling_record(backend: str, sampling: Sampling, seeds: Sequence[int]) -> dict[str, Any]:
    """What the manifest says a backend received.

    The body's sampling fields and the seeds (one per judgment), and how each parameter was mapped.
    ``max_tokens`` is left out: it is each stage's budget, recorded apart.
    """
    wire = wire_sampling(backend, sampling)
    return {"sent": {**wire.fields, "seed": list(seeds)}, "mapped": list(wire.notes)}


def declared(*, batch_invariant: bool) -> dict[str, Any]:
    """Server settings a judge's config declares and no API reports, for the fingerprint.

    Empty when none is declared, so older fingerprints still match.
    """
    return {"batch_invariant": True} if batch_invariant else {}
