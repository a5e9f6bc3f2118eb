"""What every kind of run configures alike: the embedded judges, TOML files, flag overrides.

The cue sweep (``judgeprobe.cue.config``), the rubric probe and the candidate builder each have
a config of their own; they read it, override it from the command line and name their judges
the same way, here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from judgeprobe import JudgeprobeError, first_error, scrub
from judgeprobe.core.tomlfile import read_toml
from judgeprobe.engine.settings import JudgeConfig


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
#: (bench/judge_choice.py, docs/backends.md). ``servers/embedded.py`` holds their weights and ports.
EMBEDDED = (
    EmbeddedJudge("qwen2.5-coder-0.5b", "http://127.0.0.1:8082/v1", "make serve-qwen05"),
    EmbeddedJudge("qwen2.5-coder-1.5b", "http://127.0.0.1:8083/v1", "make serve-qwen15"),
    EmbeddedJudge("gemma3-270m", "http://127.0.0.1:8080/v1", "make serve-gemma"),
)


def embedded_judge(name: str) -> JudgeConfig:
    """The embedded judge called ``name``."""
    return next(j for j in EMBEDDED if j.name == name).config()


def default_judges() -> list[JudgeConfig]:
    """The embedded judge that ``make run`` starts, used when a config names none."""
    return [EMBEDDED[0].config()]


M = TypeVar("M", bound=BaseModel)


def load_toml(path: Path | None, model: type[M]) -> M:
    """Read and validate a TOML config (defaults when ``path`` is None).

    Any problem is one JudgeprobeError line. Shared by the sweep and the rubric probe.
    """
    if path is None:
        return model()
    return read_toml(path, "config").validated(model)


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


#: The form of a judge on the command line (``--judge``, ``--author``, ``--paraphraser``).
JUDGE_FLAG = "NAME=URL[,URL…]"


def parse_judge_flag(flag: str, option: str = "--judge") -> tuple[str, tuple[str, ...]]:
    """``NAME=URL[,URL…]`` from the command line: the judge's name and its replicas' URLs."""
    name, sep, listed = flag.partition("=")
    urls = tuple(url.strip() for url in listed.split(","))
    if not sep or not name.strip() or not all(urls):
        raise JudgeprobeError(f"{option} {scrub(flag)!r}: expected {JUDGE_FLAG}")
    return name.strip(), urls


def judge_from_flag(
    flag: str,
    known: Mapping[str, JudgeConfig] | None = None,
    option: str = "--judge",
    default: JudgeConfig | Mapping[str, object] | None = None,
) -> JudgeConfig:
    """The judge a ``NAME=URL[,URL…]`` flag names, validated; any problem is one line.

    A judge of that name in ``known`` (the config's) keeps its settings with the new URLs;
    another starts from ``default``'s settings (none: the defaults). Several URLs are replicas.
    """
    name, urls = parse_judge_flag(flag, option)
    base = (known or {}).get(name, default)
    kept = base.model_dump(exclude={"url", "urls"}) if isinstance(base, JudgeConfig) else base
    try:
        return JudgeConfig.model_validate({**(kept or {}), "name": name, "urls": urls})
    except ValidationError as exc:
        raise JudgeprobeError(
            f"{option} {scrub(flag)!r}: {first_error(exc, 'judge', value=True)}"
        ) from None
