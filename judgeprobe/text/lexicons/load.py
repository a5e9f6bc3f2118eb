"""Versioned explanation lexicons (cue words, stereotypes, acknowledgement, attack vocabulary).

The battery's per-family cue words (``families_v1.toml``) and the phrases that answer a push
(``pressure_v1.toml``) are versioned files of their own: ``v1.toml`` is unchanged, so a run
read with it keeps its recorded hash. A user's file with ``[family.*]`` tables or a
``[pressure]`` table replaces the packaged ones.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
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


class FamilyFile(BaseModel):
    """The ``[family.NAME]`` tables of a lexicon file (absent: none)."""

    family: dict[str, _Words] = {}


class PressureFile(BaseModel):
    """The ``[pressure]`` table of a lexicon file (absent: none)."""

    pressure: _Phrases | None = None


FAMILIES = "families_v1.toml"
PRESSURE = "pressure_v1.toml"


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
    family: dict[str, tuple[str, ...]] = field(default_factory=dict)
    family_sha256: str = ""
    family_origin: str = ""
    pressure: tuple[str, ...] = ()
    pressure_sha256: str = ""


def load_lexicons(path: Path | None = None) -> Lexicons:
    """The packaged lexicons, or a user's file with the same tables."""
    found = (
        packaged_toml(__package__, "v1.toml", "lexicons")
        if path is None
        else read_toml(path, "lexicons")
    )
    raw = found.validated(LexiconFile)
    families = found.validated(FamilyFile)
    if not families.family:
        found_family = packaged_toml(__package__, FAMILIES, "lexicons")
        families = found_family.validated(FamilyFile)
    else:
        found_family = found
    pushed = found.validated(PressureFile).pressure
    found_pressure = found
    if pushed is None:
        found_pressure = packaged_toml(__package__, PRESSURE, "lexicons")
        pushed = found_pressure.validated(PressureFile).pressure
    return Lexicons(
        cue=_lower(raw.cue.words),
        stereotype=_lower(raw.stereotype.phrases),
        acknowledgement=_lower(raw.acknowledgement.phrases),
        attack={k: _lower(v.words) for k, v in raw.attack.items()},
        sha256=hashlib.sha256(found.raw).hexdigest(),
        origin=found.origin,
        family={k: _lower(v.words) for k, v in families.family.items()},
        family_sha256=hashlib.sha256(found_family.raw).hexdigest(),
        family_origin=found_family.origin,
        pressure=_lower(pushed.phrases if pushed else []),
        pressure_sha256=hashlib.sha256(found_pressure.raw).hexdigest(),
    )
