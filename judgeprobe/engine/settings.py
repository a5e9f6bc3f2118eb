"""What the engine needs to know of a judge and of its own reliability knobs.

``JudgeConfig`` (one OpenAI-compatible server or its replicas, with credentials kept out of
every message) and ``EngineConfig`` (re-asks, retries, timeouts, deadlines, the breaker) are the
engine's own settings; the sweep, rubric and candidate configs (``judgeprobe.cue.config`` and
friends) compose them, so the engine never depends on what a sweep is.
"""

from __future__ import annotations

import base64
import math
import os
import re
import warnings
from collections.abc import Mapping, Sequence
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
from judgeprobe.prompts.judge import Fixed, JudgePrompt, judge_prompt, load_messages_file


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
    """How a judge's own reply is read (protocol ``own``): a pattern, a JSON key or logprobs.

    ``map`` names each verdict token in screen terms: ``1`` (the response shown first wins),
    ``2`` or ``tie``. ``pattern``: the last match counts (its first group when it has one);
    matches that disagree make the reply ambiguous. ``json``: the reply is a JSON object and
    this key holds the token, under a schema built from ``map``; ``explanation`` names the key
    holding the explanation (else the reply without the verdict is the explanation).
    ``logprobs`` (instead of pattern, json and map): each verdict token in screen terms, read
    from the top log-probabilities of the reply's first token (``protocols.logprobs``; AlpacaEval
    2's ``m``/``M``), its budget 1 token unless ``max_tokens`` says otherwise.
    ``max_tokens``: the reply's budget (an explanation of the judge's own length).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    pattern: str = ""
    json_key: str = Field(default="", alias="json")
    map: dict[str, Literal["1", "2", "tie"]] = Field(default_factory=dict)
    explanation: str = ""
    logprobs: dict[str, Literal["1", "2", "tie"]] = Field(default_factory=dict)
    max_tokens: int = Field(default=1024, ge=1)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        _compiled(pattern)
        return pattern

    @model_validator(mode="before")
    @classmethod
    def _one_token_budget(cls, data: Any) -> Any:
        """A log-probability verdict reads one token: its budget is 1 unless set."""
        if isinstance(data, dict) and data.get("logprobs") and "max_tokens" not in data:
            return {**data, "max_tokens": 1}
        return data

    @model_validator(mode="after")
    def _one_form(self) -> VerdictFormat:
        if self.logprobs:
            if self.pattern or self.json_key or self.map or self.explanation:
                raise ValueError(
                    "logprobs is a verdict form of its own: not with pattern, json, map or "
                    "explanation (it maps its tokens itself)"
                )
            _token_map(self.logprobs, "logprobs")
            return self
        if bool(self.pattern) == bool(self.json_key):
            raise ValueError("give either pattern or json (the key holding the verdict)")
        if self.explanation and not self.json_key:
            raise ValueError("explanation names a JSON key: it goes with json, not pattern")
        if len(self.map) < 2 or not {"1", "2"} <= set(self.map.values()):
            raise ValueError("map must name a token for each of 1 and 2")
        if self.max_tokens < TEXT_BUDGET:
            raise ValueError(
                f"max_tokens {self.max_tokens} is too small for a verdict read from text "
                f"(at least {TEXT_BUDGET}; a one-token verdict is logprobs)"
            )
        return self

    @model_serializer(mode="wrap")
    def _omit_logprobs(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``logprobs`` left out when unset: the text forms' keys and digests stay as they were."""
        data: dict[str, Any] = handler(self)
        if not self.logprobs:
            data.pop("logprobs", None)
        return data

    def __repr_args__(self) -> Any:
        """The repr (a job key's protocol part) without ``logprobs`` when unset, as before."""
        return [(k, v) for k, v in super().__repr_args__() if not (k == "logprobs" and not v)]


#: The smallest budget of a reply read from its text (a pattern or a JSON verdict or score).
TEXT_BUDGET = 16
#: The widest ``logprobs`` score range (max − min): 0..100 at most.
MAX_SCORE_TOKENS = 100


def _token_map(tokens: Mapping[str, str], name: str) -> None:
    """A ``logprobs`` map: tokens that are not blank, a token for 1 and for 2, each once.

    Tokens are compared with surrounding whitespace stripped (``m`` and `` m`` are one token),
    so two keys equal after stripping would name one token twice.
    """
    stripped = [t.strip() for t in tokens]
    if not all(stripped):
        raise ValueError(f"{name}: a token is blank (tokens are read with whitespace stripped)")
    twice = sorted({t for t in stripped if stripped.count(t) > 1})
    if twice:
        raise ValueError(f"{name}: {twice[0]!r} is given twice once whitespace is stripped")
    if not {"1", "2"} <= set(tokens.values()):
        raise ValueError(f"{name} must name a token for each of 1 and 2")


class ScoreFormat(BaseModel):
    """How a pointwise judge's reply is read (``kind = "score"``): a score from ``min`` to ``max``.

    ``pattern``: its one capturing group holds the score; the last match counts and matches
    that disagree make the reply ambiguous. ``json``: the reply is a JSON object and this key
    holds the score, under a schema that bounds it; ``explanation`` names the key holding the
    explanation (else the reply without the score is the explanation). A score outside
    [min, max] is re-asked, then Invalid, like any reply that does not conform.
    ``logprobs = "1..10"`` (instead of pattern and json; min and max come from it): the score is
    Σ s·p(s) over the integer tokens of that range among the first token's top
    log-probabilities, renormalised over them (G-Eval's probability-weighted score).

    ``map``: a grader that answers with a category (``GRADE: C``): the token read is looked up
    here (``{ C = 1, P = 0.5, I = 0 }``) and the scale runs from the smallest value to the
    largest (``min`` and ``max`` come from it); a token not in the map is re-asked, then Invalid.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    pattern: str = ""
    json_key: str = Field(default="", alias="json")
    min: float
    max: float
    map: dict[str, float] | None = None
    explanation: str = ""
    logprobs: str = ""
    max_tokens: int = Field(default=1024, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _scale_of_tokens(cls, data: Any) -> Any:
        """``logprobs = "a..b"`` gives the scale (min a, max b) and a one-token budget."""
        if not isinstance(data, dict) or not data.get("logprobs"):
            return data
        found = re.fullmatch(r"(\d+)\.\.(\d+)", str(data["logprobs"]))
        if found is None:
            raise ValueError(
                f"logprobs {data['logprobs']!r} must be a range of integer score tokens, as '1..10'"
            )
        low, high = int(found.group(1)), int(found.group(2))
        if high - low > MAX_SCORE_TOKENS:  # a top list holds 20 tokens at most anyway
            raise ValueError(
                f"logprobs {data['logprobs']!r}: at most {MAX_SCORE_TOKENS + 1} score tokens"
            )
        if (data.get("min", low), data.get("max", high)) != (low, high):  # a dump has both
            raise ValueError("logprobs gives the scale (a..b): leave min and max out")
        return {"max_tokens": 1, **data, "min": low, "max": high}

    @property
    def score_tokens(self) -> dict[str, float]:
        """A ``logprobs`` score's tokens (the integers of its range, written out) and values."""
        if not self.logprobs:
            return {}
        return {str(s): float(s) for s in range(int(self.min), int(self.max) + 1)}

    @model_validator(mode="before")
    @classmethod
    def _scale_of_the_map(cls, data: Any) -> Any:
        """A graded format's scale: its map's smallest and largest value, never given apart.

        A value that is not a finite number is refused here, naming the grade, before the scale
        it would give (not as a missing min and max, not as a NaN scale later).
        """
        if not isinstance(data, dict) or not isinstance(data.get("map"), dict):
            return data
        for grade, value in data["map"].items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"map.{grade} = {value!r}: not a number (the grade's score)")
            if not math.isfinite(value):
                raise ValueError(f"map.{grade} = {value!r}: not a finite number")
        values = list(data["map"].values())
        if len(values) < 2:
            return data  # the field's own validation names the problem
        low, high = min(values), max(values)
        if data.get("min", low) != low or data.get("max", high) != high:
            raise ValueError(
                "min and max of a graded score come from its map (the smallest and the largest "
                "value): leave them out"
            )
        return {**data, "min": low, "max": high}

    @field_validator("map")
    @classmethod
    def _categories(cls, grades: dict[str, float] | None) -> dict[str, float] | None:
        if grades is not None and len(set(grades.values())) < 2:
            raise ValueError("map must give at least two different values (the scale)")
        return grades

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
        if self.logprobs:
            if self.pattern or self.json_key or self.explanation or self.map is not None:
                raise ValueError(
                    "logprobs is a score form of its own: not with pattern, json, map or "
                    "explanation"
                )
            if not self.min < self.max:
                raise ValueError(f"logprobs {self.logprobs!r}: the range must run upwards")
            return self
        if self.max_tokens < TEXT_BUDGET:
            raise ValueError(
                f"max_tokens {self.max_tokens} is too small for a score read from text "
                f"(at least {TEXT_BUDGET}; a one-token score is logprobs)"
            )
        if bool(self.pattern) == bool(self.json_key):
            raise ValueError("give either pattern or json (the key holding the score)")
        if self.explanation and not self.json_key:
            raise ValueError("explanation names a JSON key: it goes with json, not pattern")
        if not self.min < self.max:
            raise ValueError(f"score min ({self.min:g}) must be below max ({self.max:g})")
        return self

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A numeric text score's dump as before graded and log-probability scores existed.

        ``map`` and ``logprobs`` are left out when unset, so its keys and digests are unchanged.
        """
        data: dict[str, Any] = handler(self)
        if self.map is None:
            data.pop("map", None)
        if not self.logprobs:
            data.pop("logprobs", None)
        return data

    def __repr_args__(self) -> Any:
        """The repr (a job key's protocol part) without ``map`` and ``logprobs`` when unset."""
        unset = {"map": None, "logprobs": ""}
        return [(k, v) for k, v in super().__repr_args__() if not (k in unset and v == unset[k])]


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
    # The judge's prompt as its users send it (judgeprobe.prompts.judge): a system prompt file
    # beside ``prompt``, or a JSON messages file in its place; ``placeholders`` maps the
    # prompt's own placeholder names to what fills them (a screen slot, a conversation turn,
    # an item field, or { text = "…" }).
    system: str = ""
    messages: str = ""
    placeholders: dict[str, str | Fixed] = Field(default_factory=dict)
    # USD per million prompt and completion tokens: the plan's bill and the run's spend.
    price: Price | None = None
    _own_prompt: Template | None = PrivateAttr(default=None)
    _own_wordings: tuple[Template, ...] = PrivateAttr(default=())
    _judge_prompts: tuple[JudgePrompt, ...] = PrivateAttr(default=())

    @property
    def has_prompt(self) -> bool:
        """Whether the judge carries its own prompt (a prompt file or a messages file)."""
        return bool(self.prompt or self.messages)

    @model_validator(mode="after")
    def _prompt_and_verdict(self) -> JudgeConfig:
        if self.prompt and self.messages:
            raise ValueError("give prompt (with an optional system) or messages, not both")
        if self.system and not self.prompt:
            raise ValueError(
                "system goes beside prompt (a messages file holds its own system message)"
            )
        if self.placeholders and not self.has_prompt:
            raise ValueError("placeholders name the judge's own prompt's: give prompt or messages")
        if self.wordings and self.messages:
            raise ValueError(
                "wordings replace the prompt file: give prompt (and system), not messages"
            )
        if self.kind == "score":
            if not self.has_prompt or self.score is None or self.verdict is not None:
                raise ValueError(
                    'kind = "score" needs prompt and score (not verdict): a pointwise judge '
                    "scores one response with its own prompt"
                )
        elif self.score is not None:
            raise ValueError('score goes with kind = "score" (a pointwise judge)')
        elif self.has_prompt != (self.verdict is not None):
            raise ValueError("prompt and verdict go together: a judge's own prompt needs both")
        if self.wordings and not self.prompt:
            raise ValueError(
                "wordings are paraphrases of the judge's own prompt: give prompt and verdict "
                "too (the built-in protocols' wordings are the sweep's wordings = N)"
            )
        if self.has_prompt:  # read once: the text checked, hashed and sent is the same text
            prompts = _judge_prompts(self)
            self._judge_prompts = prompts
            self._own_prompt = prompts[0].user_template
            self._own_wordings = tuple(p.user_template for p in prompts[1:])
        return self

    @property
    def judge_prompt(self) -> JudgePrompt | None:
        """The judge's own prompt as sent (its messages, its placeholders), None without one."""
        return self._judge_prompts[0] if self._judge_prompts else None

    @property
    def judge_wordings(self) -> tuple[JudgePrompt, ...]:
        """The judge's prompt with each of its ``wordings`` in place of its user message."""
        return self._judge_prompts[1:]

    @property
    def pointwise(self) -> bool:
        """Whether this judge scores one response at a time (``kind = "score"``)."""
        return self.kind == "score"

    @property
    def reads_logprobs(self) -> bool:
        """Whether its verdict or score is read from log-probabilities (the probe asks for them)."""
        return bool(
            (self.verdict and self.verdict.logprobs) or (self.score and self.score.logprobs)
        )

    @property
    def own_reads_text(self) -> bool:
        """Whether its own format reads free text (a pattern): no schema is ever sent for it."""
        fmt = self.score if self.pointwise else self.verdict
        return fmt is not None and not fmt.json_key

    @property
    def own_prompt(self) -> Template | None:
        """The judge's own prompt as read when the config was loaded (None without one)."""
        return self._own_prompt

    @property
    def own_wordings(self) -> tuple[Template, ...]:
        """The paraphrases of its own prompt (``wordings``), as read when the config was loaded."""
        return self._own_wordings

    def own_record(self) -> dict[str, Any]:
        """The own prompt as the digest and the manifest record it: path, hash, verdict format.

        A system prompt or messages file is recorded with its hash too, and a prompt that is
        more than one file or maps placeholders with the hash its judgments carry.
        """
        assert self._own_prompt is not None
        assert self.judge_prompt is not None
        record: dict[str, Any] = {"path": self.prompt, "sha256": self._own_prompt.sha256}
        if self.messages:
            raw = load_prompt_file(self.messages)
            record = {"messages": {"path": self.messages, "sha256": raw.sha256}}
        if self.system:
            system = self.judge_prompt.parts[0].template
            record["system"] = {"path": self.system, "sha256": system.sha256}
        record |= self.judge_prompt.record()
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
        for name in ("system", "messages", "placeholders"):  # older dumps had none
            if not getattr(self, name):
                data.pop(name, None)
        if not self.has_prompt:
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


def _judge_prompts(judge: JudgeConfig) -> tuple[JudgePrompt, ...]:
    """The judge's prompt, then the same with each wording as its user message, all checked.

    A paraphrase shows the judge what the prompt shows (the same placeholders) and is another
    text: one identical to the prompt or to another paraphrase would only send a request twice.
    """
    system = load_prompt_file(judge.system) if judge.system else None
    parts = load_messages_file(judge.messages) if judge.messages else ()

    def assembled(path: str | None) -> JudgePrompt:
        prompt = load_prompt_file(path) if path else None
        return judge_prompt(prompt, system, parts, judge.placeholders, pointwise=judge.pointwise)

    first = assembled(judge.prompt or None)
    out = [first]
    seen = {first.user_template.sha256: first.user_template.name}
    for path in judge.wordings:
        worded = assembled(path)
        if worded.user_template.placeholders != first.user_template.placeholders:
            wanted = " ".join(f"{{{p}}}" for p in sorted(first.user_template.placeholders))
            raise ValueError(
                f"wording {path}: its placeholders must be the prompt's ({wanted}), so every "
                "wording shows the judge the same texts"
            )
        if worded.user_template.sha256 in seen:
            raise ValueError(
                f"wording {path}: the same text as {seen[worded.user_template.sha256]}"
            )
        seen[worded.user_template.sha256] = path
        out.append(worded)
    return tuple(out)


def own_records(judges: Sequence[JudgeConfig]) -> dict[str, dict[str, Any]]:
    """Each own prompt's record (``JudgeConfig.own_record``) by judge; {} when none has one."""
    return {j.name: j.own_record() for j in judges if j.has_prompt}
