"""What the engine needs to know of a judge and of its own reliability knobs.

``JudgeConfig`` (one OpenAI-compatible server or its replicas, with credentials kept out of
every message) and ``EngineConfig`` (re-asks, retries, timeouts, deadlines, the breaker) are the
engine's own settings; the sweep, rubric and candidate configs (``judgeprobe.cue.config`` and
friends) compose them, so the engine never depends on what a sweep is.
"""

from __future__ import annotations

import base64
import os
import re
import warnings
from collections.abc import Sequence
from typing import Any, Literal
from urllib.parse import unquote, urlsplit, urlunsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    SerializerFunctionWrapHandler,
    ValidatorFunctionWrapHandler,
    field_serializer,
    field_validator,
    model_serializer,
    model_validator,
)

from judgeprobe import REDACTED, JudgeprobeError
from judgeprobe.engine.structured import BACKENDS
from judgeprobe.prompts import Template, load_prompt_file

#: What a judge's own prompt may hold: the context, both responses and each one's label, in
#: screen order (``{LABEL_k}`` is the label of the response shown k-th).
OWN_PLACEHOLDERS = ("CONTEXT", "RESPONSE_1", "RESPONSE_2", "LABEL_1", "LABEL_2")
#: What a pointwise judge's own prompt may hold (``kind = "score"``): the context, the one
#: response it scores and that response's label.
SCORE_PLACEHOLDERS = ("CONTEXT", "RESPONSE", "LABEL")


def split_credentials(url: str) -> tuple[str, str]:
    """A URL without its ``user:password@`` part, and that part (``""`` when none)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, ""
    userinfo, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=host)), userinfo


class ClusterEngine(BaseModel):
    """A judge that Ray runs inside the cluster under ``--ray`` (no server to stand up).

    ``engine = "vllm"``: Ray Data's vLLM processor, ``replicas`` engines of
    ``gpus_per_replica`` GPUs each (tensor parallel), loading ``model_source`` (a path or
    model id; default the judge's ``model``) with ``engine_kwargs``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    engine: Literal["vllm"] = "vllm"
    model_source: str = ""
    engine_kwargs: dict[str, Any] = Field(default_factory=dict)
    gpus_per_replica: int = Field(default=1, ge=1)
    replicas: int = Field(default=1, ge=1)
    batch_size: int = Field(default=64, ge=1)
    accelerator_type: str = ""  # e.g. "H100"; "" = any GPU


def _compiled(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled; ValueError (one line) when it is not a regular expression."""
    try:
        with warnings.catch_warnings():  # a FutureWarning would break the one-line error
            warnings.simplefilter("ignore")
            return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"pattern {pattern!r} is not a regular expression ({exc})") from None


class VerdictFormat(BaseModel):
    """How a judge's own reply is read (protocol ``own``): a pattern in free text, or a JSON key.

    ``map`` names each verdict token in screen terms: ``1`` (the response shown first wins),
    ``2`` or ``tie``. ``pattern``: the last match counts (its first group when it has one);
    matches that disagree make the reply ambiguous. ``json``: the reply is a JSON object and
    this key holds the token, under a schema built from ``map``; ``explanation`` names the key
    holding the explanation (else the reply without the verdict is the explanation).
    ``max_tokens``: the reply's budget (an explanation of the judge's own length).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    pattern: str = ""
    json_key: str = Field(default="", alias="json")
    map: dict[str, Literal["1", "2", "tie"]] = Field(min_length=2)
    explanation: str = ""
    max_tokens: int = Field(default=1024, ge=16)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        _compiled(pattern)
        return pattern

    @model_validator(mode="after")
    def _one_form(self) -> VerdictFormat:
        if bool(self.pattern) == bool(self.json_key):
            raise ValueError("give either pattern or json (the key holding the verdict)")
        if self.explanation and not self.json_key:
            raise ValueError("explanation names a JSON key: it goes with json, not pattern")
        if not {"1", "2"} <= set(self.map.values()):
            raise ValueError("map must name a token for each of 1 and 2")
        return self


class ScoreFormat(BaseModel):
    """How a pointwise judge's reply is read (``kind = "score"``): a score from ``min`` to ``max``.

    ``pattern``: its one capturing group holds the score; the last match counts and matches
    that disagree make the reply ambiguous. ``json``: the reply is a JSON object and this key
    holds the score, under a schema that bounds it; ``explanation`` names the key holding the
    explanation (else the reply without the score is the explanation). A score outside
    [min, max] is re-asked, then Invalid, like any reply that does not conform.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    pattern: str = ""
    json_key: str = Field(default="", alias="json")
    min: float
    max: float
    explanation: str = ""
    max_tokens: int = Field(default=1024, ge=16)

    @field_validator("pattern")
    @classmethod
    def _one_group(cls, pattern: str) -> str:
        if pattern and _compiled(pattern).groups != 1:
            raise ValueError(
                f"pattern {pattern!r} must have exactly one group (the score), "
                f"not {_compiled(pattern).groups}"
            )
        return pattern

    @model_validator(mode="after")
    def _one_form(self) -> ScoreFormat:
        if bool(self.pattern) == bool(self.json_key):
            raise ValueError("give either pattern or json (the key holding the score)")
        if self.explanation and not self.json_key:
            raise ValueError("explanation names a JSON key: it goes with json, not pattern")
        if not self.min < self.max:
            raise ValueError(f"score min ({self.min:g}) must be below max ({self.max:g})")
        return self


class Price(BaseModel):
    """What a judge's provider charges, in USD per million tokens (``price`` on a judge).

    It decides no request (the config digest leaves it out, like every judge setting): it
    prices the bill ``run --plan`` prints and the spend the manifest and the report record.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: float = Field(ge=0.0, allow_inf_nan=False)
    completion: float = Field(ge=0.0, allow_inf_nan=False)

    def cost(self, prompt_tokens: float, completion_tokens: float) -> float:
        """The USD cost of these tokens at this price."""
        return (prompt_tokens * self.prompt + completion_tokens * self.completion) / 1e6


class JudgeConfig(BaseModel):
    """One judge: an OpenAI-compatible server swapped by URL, or several replicas of it.

    ``url`` names one server; ``urls`` names replicas serving the same model (requests are
    balanced over them, and ``concurrency`` applies to each). Give either; with ``urls``,
    ``url`` becomes the first replica. ``replicas`` lists them all in both cases.

    Secrets never sit in a field that reaches a message, the manifest or a key: a
    ``user:password@`` in a URL is taken out at validation (``url``/``urls`` are public) and
    kept in ``url_credentials`` (per replica, a SecretStr, redacted in JSON dumps and repr);
    an API key is only ever read from the environment variable ``api_key_env`` names.

    A judge with ``cluster`` (an in-cluster engine, ``--ray`` only) needs no URL.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9._-]+$")
    url: str = Field(default="", pattern=r"^(https?://.*)?$")
    urls: tuple[str, ...] = ()
    model: str = ""  # "" = the first model the server lists
    backend: str = "auto"
    concurrency: int = Field(default=4, ge=1, le=1024)
    rate_limit: float = Field(default=0.0, ge=0.0)  # requests/second; 0 = no cap
    api_key_env: str = ""  # name of the environment variable holding the key; never the key
    disable_thinking: bool = False  # reasoning models: ask the chat template not to think
    # The server is vLLM run with VLLM_BATCH_INVARIANT=1. Declared (no API shows it); goes
    # into the server fingerprint and the manifest's determinism level.
    batch_invariant: bool = False
    # How to start this judge's server (e.g. "make serve-qwen05"), named in the error when
    # it cannot be reached. Decides no request, so no dump carries it: config digests stay
    # as they were, and a judge rebuilt from a flag never inherits another's command.
    serve: str = Field(default="", exclude=True)
    url_credentials: dict[str, SecretStr] = Field(default_factory=dict, repr=False)
    cluster: ClusterEngine | None = None
    # The judge's own prompt (a path, read relative to the working directory like items) and
    # how its reply is read: the judge of protocol ``own`` (judgeprobe.protocols.own).
    prompt: str = ""
    verdict: VerdictFormat | None = None
    # A pointwise judge (``kind = "score"``) scores one response at a time by ``score``;
    # its prompt holds {CONTEXT} {RESPONSE} {LABEL} (judgeprobe.protocols.pointwise).
    kind: Literal["pairwise", "score"] = "pairwise"
    score: ScoreFormat | None = None
    # Paraphrases of the judge's own prompt (paths, read like ``prompt``): under protocol own,
    # every Blind showing is judged under the prompt and each of these (the wording row).
    wordings: tuple[str, ...] = ()
    # USD per million prompt and completion tokens: the plan's bill and the run's spend.
    price: Price | None = None
    _own_prompt: Template | None = PrivateAttr(default=None)
    _own_wordings: tuple[Template, ...] = PrivateAttr(default=())

    @model_validator(mode="after")
    def _prompt_and_verdict(self) -> JudgeConfig:
        if self.kind == "score":
            if not self.prompt or self.score is None or self.verdict is not None:
                raise ValueError(
                    'kind = "score" needs prompt and score (not verdict): a pointwise judge '
                    "scores one response with its own prompt"
                )
        elif self.score is not None:
            raise ValueError('score goes with kind = "score" (a pointwise judge)')
        elif bool(self.prompt) != (self.verdict is not None):
            raise ValueError("prompt and verdict go together: a judge's own prompt needs both")
        if self.wordings and not self.prompt:
            raise ValueError(
                "wordings are paraphrases of the judge's own prompt: give prompt and verdict "
                "too (the built-in protocols' wordings are the sweep's wordings = N)"
            )
        if self.prompt:  # read once: the text checked, hashed and sent is the same text
            self._own_prompt = _checked_prompt(load_prompt_file(self.prompt), self.pointwise)
            self._own_wordings = _checked_wordings(self._own_prompt, self.wordings, self.pointwise)
        return self

    @property
    def pointwise(self) -> bool:
        """Whether this judge scores one response at a time (``kind = "score"``)."""
        return self.kind == "score"

    @property
    def own_prompt(self) -> Template | None:
        """The judge's own prompt as read when the config was loaded (None without one)."""
        return self._own_prompt

    @property
    def own_wordings(self) -> tuple[Template, ...]:
        """The paraphrases of its own prompt (``wordings``), as read when the config was loaded."""
        return self._own_wordings

    def own_record(self) -> dict[str, Any]:
        """The own prompt as the digest and the manifest record it: path, hash, verdict format."""
        assert self._own_prompt is not None
        record: dict[str, Any] = {"path": self.prompt, "sha256": self._own_prompt.sha256}
        if self._own_wordings:  # only when given: older records and digests stay as they were
            record["wordings"] = [{"path": w.name, "sha256": w.sha256} for w in self._own_wordings]
        if self.score is not None:
            return record | {"kind": self.kind, "score": self.score.model_dump(by_alias=True)}
        assert self.verdict is not None
        return record | {"verdict": self.verdict.model_dump(by_alias=True)}

    @model_serializer(mode="wrap")
    def _omit_own(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leave the own-prompt fields and the price out when unset: older dumps still match."""
        data: dict[str, Any] = handler(self)
        if not self.prompt:
            data.pop("prompt", None)
            data.pop("verdict", None)
        if not self.pointwise:
            data.pop("kind", None)
            data.pop("score", None)
        else:
            data.pop("verdict", None)
        if not self.wordings:
            data.pop("wordings", None)
        if self.price is None:
            data.pop("price", None)
        return data

    @model_validator(mode="after")
    def _reachable(self) -> JudgeConfig:
        """A served judge has a URL; an in-cluster one names its model."""
        if self.cluster is None and not self.url:
            raise ValueError("url is required (or [judges.cluster] for an engine Ray runs)")
        if self.cluster is not None and not (self.model or self.cluster.model_source):
            raise ValueError("an in-cluster judge needs model (or cluster.model_source)")
        return self

    @model_validator(mode="wrap")
    @classmethod
    def _credentials(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """Move ``user:password@`` out of the URLs into ``url_credentials``."""
        if not isinstance(data, dict):
            return handler(data)
        found: dict[str, str] = {}
        data = dict(data)
        for name in ("url", "urls"):
            value = data.get(name)
            values = [value] if isinstance(value, str) else value
            if not isinstance(values, list | tuple) or not all(isinstance(v, str) for v in values):
                continue
            public = []
            for url in values:
                bare, userinfo = split_credentials(url)
                public.append(bare)
                if userinfo:
                    found[bare.rstrip("/")] = userinfo
            data[name] = public[0] if isinstance(value, str) else public
        if found and data.get("api_key_env"):
            raise ValueError("give credentials either in the URL or through api_key_env, not both")
        if found:
            data["url_credentials"] = {**data.get("url_credentials", {}), **found}
        judge = handler(data)
        stale = set(judge.url_credentials) - set(judge.replicas)
        if stale:  # credentials of a URL this judge no longer has
            kept = {u: s for u, s in judge.url_credentials.items() if u not in stale}
            judge = judge.model_copy(update={"url_credentials": kept})
        return judge

    @field_serializer("url_credentials", when_used="json")
    def _redact(self, creds: dict[str, SecretStr]) -> dict[str, str]:
        return dict.fromkeys(creds, REDACTED)

    def auth_headers(self, url: str) -> dict[str, str]:
        """The ``Authorization`` header for one replica (empty when it needs none).

        Raises one line when ``api_key_env`` names a variable that is not set: a run must
        not go on silently without the key it was configured with.
        """
        if self.api_key_env:
            key = os.environ.get(self.api_key_env, "")
            if not key:
                raise JudgeprobeError(
                    f"judge {self.name}: api_key_env names {self.api_key_env}, which is not "
                    "set (or empty) in the environment"
                )
            return {"Authorization": f"Bearer {key}"}
        userinfo = self.url_credentials.get(url)
        if userinfo is None:
            return {}
        user, _, password = userinfo.get_secret_value().partition(":")
        token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
        return {"Authorization": f"Basic {token}"}

    def secrets(self) -> list[str]:
        """Every secret this judge sends, to redact from a server's echoed error text."""
        found = [h for url in self.replicas for h in self.auth_headers(url).values()]
        found += [h.split(" ", 1)[1] for h in found]
        found += [s.get_secret_value() for s in self.url_credentials.values()]
        return [s for s in found if len(s) >= 4]

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        if value != "auto" and value not in BACKENDS:
            raise ValueError(f"backend must be auto or one of {', '.join(BACKENDS)}")
        return value

    @model_validator(mode="before")
    @classmethod
    def _replicas(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not data.get("urls"):
            return data
        urls = data["urls"]
        if isinstance(urls, str) or not all(isinstance(u, str) for u in urls):
            raise ValueError("urls must be a list of URLs")
        urls = [u.rstrip("/") for u in urls]
        if data.get("url") and data["url"].rstrip("/") != urls[0]:
            raise ValueError("give either url or urls (replicas), not both")
        if len(set(urls)) != len(urls):
            raise ValueError("urls must not repeat a replica")
        return {**data, "url": urls[0], "urls": urls}

    @field_validator("url")
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @field_validator("urls")
    @classmethod
    def _http_urls(cls, urls: tuple[str, ...]) -> tuple[str, ...]:
        for url in urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"replica URL {url!r} must start with http:// or https://")
        return urls

    @property
    def replicas(self) -> tuple[str, ...]:
        """Every replica's base URL (one when only ``url`` is configured)."""
        return self.urls or (self.url,)

    def serve_hint(self) -> str:
        """What to do when this judge's server cannot be reached: the configured command."""
        if self.serve:
            return f"start it with `{self.serve}`"
        return "is its server running? (a judge's serve setting names the command that starts it)"


class EngineConfig(BaseModel):
    """Reliability knobs: re-asks, transport retries, timeouts and deadlines."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_reasks: int = Field(default=2, ge=0)
    max_attempts: int = Field(default=6, ge=1)
    attempt_timeout_s: float = Field(default=180.0, gt=0)
    request_deadline_s: float = Field(default=900.0, gt=0)
    sweep_deadline_s: float | None = Field(default=None, gt=0)
    # A transport retry waits uniform(0, min(cap, base × 2^(attempt − 1))) seconds (full
    # jitter), never less than the server's Retry-After up to the cap (engine.retry.backoff).
    backoff_base_s: float = Field(default=0.5, ge=0)
    backoff_cap_s: float = Field(default=30.0, ge=0)
    # A reply cut at max_tokens is asked once more with factor × the stage's budget (never
    # re-sent unchanged, never re-asked), up to the cap; counted as an escalation.
    escalation_factor: float = Field(default=2.0, gt=1.0)
    max_tokens_cap: int = Field(default=4096, ge=16)
    # Runs a judge cannot serve (judgeprobe.engine.breaker): stop sending to a judge whose
    # first N judgments all end Invalid (0 = never), and exit 4 when a judge's Invalid share
    # of the judgments that ran is above the rate (1 = never). They decide no request.
    breaker_after: int = Field(default=8, ge=0)
    fail_invalid_rate: float = Field(default=0.5, ge=0.0, le=1.0)
    # An item whose texts are longer (estimated tokens) is refused before anything is sent,
    # whether or not the server reports its context (judgeprobe.engine.checks checks that).
    max_item_tokens: int = Field(default=32_768, ge=1)


#: Engine settings that decide no request, left out of the config digest.
RUN_CONTROL = ("breaker_after", "fail_invalid_rate", "max_item_tokens")


def lanes_of(judges: Sequence[JudgeConfig], per_slot: int = 1) -> dict[str, int]:
    """Concurrent lanes per judge: ``per_slot`` for every server slot of every replica."""
    return {j.name: per_slot * j.concurrency * len(j.replicas) for j in judges}


def _checked_prompt(prompt: Template, pointwise: bool = False) -> Template:
    """``prompt`` when it holds only the placeholders ``own`` fills, every response too.

    A pairwise prompt shows both responses; a pointwise one (``pointwise``) its one response.
    """
    found = prompt.placeholders
    allowed = SCORE_PLACEHOLDERS if pointwise else OWN_PLACEHOLDERS
    unknown = sorted(found - set(allowed))
    if unknown:
        known = " ".join(f"{{{p}}}" for p in allowed)
        kind = "a pointwise judge's prompt has " if pointwise else ""
        raise ValueError(
            f"prompt file {prompt.name}: unknown placeholder {{{unknown[0]}}} ({kind}{known})"
        )
    shown = ("RESPONSE",) if pointwise else ("RESPONSE_1", "RESPONSE_2")
    missing = [p for p in shown if p not in found]
    if missing:
        raise ValueError(
            f"prompt file {prompt.name}: no {{{missing[0]}}}: the judge would not see it"
        )
    return prompt


def _checked_wordings(
    prompt: Template, paths: tuple[str, ...], pointwise: bool = False
) -> tuple[Template, ...]:
    """The paraphrases of ``prompt``: each read and checked like it, with its placeholders.

    A paraphrase shows the judge what the prompt shows (the same placeholders) and is another
    text: one identical to the prompt or to another paraphrase would only send a request twice.
    """
    out: list[Template] = []
    seen = {prompt.sha256: prompt.name}
    for path in paths:
        worded = _checked_prompt(load_prompt_file(path), pointwise)
        if worded.placeholders != prompt.placeholders:
            wanted = " ".join(f"{{{p}}}" for p in sorted(prompt.placeholders))
            raise ValueError(
                f"wording {path}: its placeholders must be the prompt's ({wanted}), so every "
                "wording shows the judge the same texts"
            )
        if worded.sha256 in seen:
            raise ValueError(f"wording {path}: the same text as {seen[worded.sha256]}")
        seen[worded.sha256] = path
        out.append(worded)
    return tuple(out)


def own_records(judges: Sequence[JudgeConfig]) -> dict[str, dict[str, Any]]:
    """Each own prompt's record (``JudgeConfig.own_record``) by judge; {} when none has one."""
    return {j.name: j.own_record() for j in judges if j.prompt}
