"""Sweep configuration: one TOML file (``experiments/*.toml``), validated with pydantic.

With no file the defaults below are the default sweep: the bundled sample, the four cue
conditions with the Baseline protocol, against the embedded judge at its default URL.
"""

from __future__ import annotations

import base64
import hashlib
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_serializer,
    field_validator,
    model_validator,
)

from judgeprobe import REDACTED, JudgeprobeError, first_error, scrub
from judgeprobe.engine.request import Sampling
from judgeprobe.engine.structured import BACKENDS
from judgeprobe.metrics.flags import Readability
from judgeprobe.protocols.budget import CHARS_PER_TOKEN, MARGIN
from judgeprobe.protocols.replies import CRITERIA


@dataclass(frozen=True, slots=True)
class EmbeddedJudge:
    """An embedded CPU judge (``servers/embedded.py``): its name, URL and start command."""

    name: str
    url: str
    serve: str

    def config(self) -> JudgeConfig:
        """The judge as a config names it."""
        return JudgeConfig(name=self.name, url=self.url, concurrency=4, serve=self.serve)


#: In order of preference; the first is the default sweep's judge, chosen by measurement
#: (bench/judge_choice.py, README). ``servers/embedded.py`` holds their weights and ports.
EMBEDDED = (
    EmbeddedJudge("qwen2.5-coder-0.5b", "http://127.0.0.1:8082/v1", "make serve-qwen05"),
    EmbeddedJudge("qwen2.5-coder-1.5b", "http://127.0.0.1:8083/v1", "make serve-qwen15"),
    EmbeddedJudge("gemma3-270m", "http://127.0.0.1:8080/v1", "make serve-gemma"),
)


def embedded_judge(name: str) -> JudgeConfig:
    """The embedded judge called ``name``."""
    return next(j for j in EMBEDDED if j.name == name).config()


def split_credentials(url: str) -> tuple[str, str]:
    """A URL without its ``user:password@`` part, and that part (``""`` when none)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, ""
    userinfo, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=host)), userinfo


class JudgeConfig(BaseModel):
    """One judge: an OpenAI-compatible server swapped by URL, or several replicas of it.

    ``url`` names one server; ``urls`` names replicas serving the same model (requests are
    balanced over them, and ``concurrency`` applies to each). Give either; with ``urls``,
    ``url`` becomes the first replica. ``replicas`` lists them all in both cases.

    Secrets never sit in a field that reaches a message, the manifest or a key: a
    ``user:password@`` in a URL is taken out at validation (``url``/``urls`` are public) and
    kept in ``url_credentials`` (per replica, a SecretStr, redacted in JSON dumps and repr);
    an API key is only ever read from the environment variable ``api_key_env`` names.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9._-]+$")
    url: str = Field(pattern=r"^https?://")
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
    # whether or not the server reports its context (judgeprobe.preflight checks that).
    max_item_tokens: int = Field(default=32_768, ge=1)


#: Engine settings that decide no request, left out of the config digest.
RUN_CONTROL = ("breaker_after", "fail_invalid_rate", "max_item_tokens")


class ProtocolOptions(BaseModel):
    """Knobs of the SCoT and PBP protocols (the paper's defaults)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    weights: dict[str, float] = Field(default_factory=lambda: dict.fromkeys(CRITERIA, 1.0))
    tie_tolerance: float = Field(default=0.0, ge=0.0)  # |weighted sum 1 − sum 2| ≤ this → Tie
    pbp_score_sees_texts: bool = True  # PBP stage 2 sees document and summaries again
    # Token budgets: each stage's is sized from its reply schema at the judge's measured
    # characters per token (judgeprobe.protocols.budget); a value here replaces a stage's.
    chars_per_token: float = Field(default=CHARS_PER_TOKEN, gt=0.0)
    budget_margin: float = Field(default=MARGIN, ge=1.0)
    baseline_max_tokens: int | None = Field(default=None, ge=16)
    scot_max_tokens: int | None = Field(default=None, ge=16)
    pbp_lock_max_tokens: int | None = Field(default=None, ge=16)
    pbp_score_max_tokens: int | None = Field(default=None, ge=16)
    pbp_rank_max_tokens: int | None = Field(default=None, ge=16)

    @field_validator("weights")
    @classmethod
    def _known_criteria(cls, weights: dict[str, float]) -> dict[str, float]:
        unknown = set(weights) - set(CRITERIA)
        if unknown:
            raise ValueError(
                f"unknown criterion {sorted(unknown)[0]!r} (known: {', '.join(CRITERIA)})"
            )
        return weights


def default_judges() -> list[JudgeConfig]:
    """The embedded judge that ``make run`` starts, used when a config names none."""
    return [EMBEDDED[0].config()]


class SweepConfig(BaseModel):
    """A whole sweep: items × judges × protocols × conditions × orders × seeds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(default="default", pattern=r"^[A-Za-z0-9._-]+$")
    items: str = "bundled:sample"  # or a path to a .jsonl / .parquet candidate set
    subsets: list[str] = Field(default_factory=list)  # keep only these subsets; [] = all
    protocols: list[Literal["baseline", "scot", "pbp"]] = Field(default=["baseline"], min_length=1)
    conditions: list[str] = Field(
        default_factory=lambda: ["Blind", "True", "Flip", "Placebo"], min_length=1
    )
    order: Literal["random", "12", "21", "both"] = "random"
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    limit: int = Field(default=0, ge=0)  # 0 = every item
    # Share of Blind judgments sent again under fresh cache keys (condition BlindRepeat): the
    # judge's own flip rate, the noise floor an anchoring effect is read against.
    repeat: float = Field(default=0.0, ge=0.0, le=1.0)
    sampling: Sampling = Field(default_factory=Sampling)
    engine: EngineConfig = Field(default_factory=EngineConfig)
    protocol: ProtocolOptions = Field(default_factory=ProtocolOptions)
    report: Readability = Field(default_factory=Readability)  # when a cell is flagged unreadable
    judges: list[JudgeConfig] = Field(default_factory=default_judges, min_length=1)
    cues: dict[str, dict[str, Any]] = Field(default_factory=dict)  # user-defined conditions

    @field_validator("judges")
    @classmethod
    def _unique_names(cls, judges: list[JudgeConfig]) -> list[JudgeConfig]:
        names = [j.name for j in judges]
        if len(set(names)) != len(names):
            raise ValueError("judge names must be unique")
        return judges

    @model_validator(mode="after")
    def _repeat_needs_blind(self) -> SweepConfig:
        if self.repeat and "Blind" not in self.conditions:
            raise ValueError("repeat re-sends Blind judgments: add Blind to conditions")
        return self

    def digest(self) -> str:
        """Hash of everything that decides the requests (judge URLs excluded: swappable)."""
        unset = set() if self.repeat else {"repeat"}  # digests from before repeat existed
        body = self.model_dump(exclude={"judges", "report"} | unset)
        body["judges"] = [j.name for j in self.judges]
        for knob in RUN_CONTROL:  # resumable either way
            body["engine"].pop(knob)
        return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


M = TypeVar("M", bound=BaseModel)


def load_toml(path: Path | None, model: type[M]) -> M:
    """Read and validate a TOML config (defaults when ``path`` is None).

    Any problem is one JudgeprobeError line. Shared by the sweep and the rubric probe.
    """
    if path is None:
        return model()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise JudgeprobeError(f"config {path}: no such file") from None
    except IsADirectoryError:
        raise JudgeprobeError(f"config {path}: is a directory, not a TOML file") from None
    except OSError as exc:
        raise JudgeprobeError(f"config {path}: cannot read ({exc.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise JudgeprobeError(f"config {path}: not valid TOML: {exc}") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise JudgeprobeError(f"config {path}: {first_error(exc, 'config', value=True)}") from None


def with_overrides(cfg: M, changes: Mapping[str, object]) -> M:
    """``cfg`` with the command line's settings on top, validated again as a whole.

    Flags win over the TOML file field by field, and the merged config must pass the same
    checks as a file (e.g. ``min_tokens <= max_tokens``); a problem is one line naming the
    field and value. The merge is shallow: fields not changed stay the validated objects they
    are, so a judge keeps its credentials exactly as first validated.
    """
    if not changes:
        return cfg
    try:
        return type(cfg).model_validate({**dict(cfg), **changes})
    except ValidationError as exc:
        raise JudgeprobeError(f"command line: {first_error(exc, 'config', value=True)}") from None


def load_config(path: Path | None) -> SweepConfig:
    """The sweep config in ``path``, or the default sweep."""
    return load_toml(path, SweepConfig)


def parse_judge_flag(flag: str) -> tuple[str, str]:
    """``NAME=URL`` from the command line."""
    name, sep, url = flag.partition("=")
    if not sep or not name or not url:
        raise JudgeprobeError(f"--judge {scrub(flag)!r}: expected NAME=URL")
    return name, url
