"""Versioned explanation lexicons (cue words, stereotypes, acknowledgement, attack vocabulary)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from judgeprobe.core.tomlfile import packaged_toml, read_toml


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
    found = (
        packaged_toml(__package__, "v1.toml", "lexicons")
        if path is None
        else read_toml(path, "lexicons")
    )
    raw = found.validated(LexiconFile)
    return Lexicons(
        cue=_lower(raw.cue.words),
        stereotype=_lower(raw.stereotype.phrases),
        acknowledgement=_lower(raw.acknowledgement.phrases),
        attack={k: _lower(v.words) for k, v in raw.attack.items()},
        sha256=hashlib.sha256(found.raw).hexdigest(),
        origin=found.origin,
    )
