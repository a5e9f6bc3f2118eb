"""Versioned explanation lexicons (cue words, stereotypes, acknowledgement, attack vocabulary)."""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ValidationError

from judgeprobe import JudgeprobeError, first_error


class _Words(BaseModel):
    words: list[str]


class _Phrases(BaseModel):
    phrases: list[str]


class LexiconFile(BaseModel):
    """The TOML tables of a lexicon file (extra keys such as ``version`` are ignored)."""

    cue: _Words
    stereotype: _Phrases
    acknowledgement: _Phrases
    attack: dict[str, _Words]


def _lower(words: list[str]) -> tuple[str, ...]:
    return tuple(w.lower() for w in words)


@dataclass(frozen=True)
class Lexicons:
    """The word lists that decide whether an explanation acknowledges a cue."""

    cue: tuple[str, ...]
    stereotype: tuple[str, ...]
    acknowledgement: tuple[str, ...]
    attack: dict[str, tuple[str, ...]]
    sha256: str
    origin: str


def load_lexicons(path: Path | None = None) -> Lexicons:
    """The packaged lexicons, or a user's file with the same tables."""
    if path is None:
        data = resources.files(__package__).joinpath("v1.toml").read_bytes()
        origin = "builtin v1"
    else:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise JudgeprobeError(f"lexicons {path}: {exc.strerror}") from None
        origin = str(path)
    try:
        raw = LexiconFile.model_validate(tomllib.loads(data.decode("utf-8")))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise JudgeprobeError(f"lexicons {origin}: malformed ({exc})") from None
    except ValidationError as exc:
        raise JudgeprobeError(f"lexicons {origin}: malformed ({first_error(exc)})") from None
    return Lexicons(
        cue=_lower(raw.cue.words),
        stereotype=_lower(raw.stereotype.phrases),
        acknowledgement=_lower(raw.acknowledgement.phrases),
        attack={k: _lower(v.words) for k, v in raw.attack.items()},
        sha256=hashlib.sha256(data).hexdigest(),
        origin=origin,
    )
