"""Versioned explanation lexicons (cue words, stereotypes, acknowledgement, attack vocabulary)."""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from judgeprobe import JudgeprobeError


@dataclass(frozen=True)
class Lexicons:
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
        raw = tomllib.loads(data.decode("utf-8"))
        return Lexicons(
            cue=tuple(w.lower() for w in raw["cue"]["words"]),
            stereotype=tuple(w.lower() for w in raw["stereotype"]["phrases"]),
            acknowledgement=tuple(w.lower() for w in raw["acknowledgement"]["phrases"]),
            attack={k: tuple(w.lower() for w in v["words"]) for k, v in raw["attack"].items()},
            sha256=hashlib.sha256(data).hexdigest(),
            origin=origin,
        )
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise JudgeprobeError(
            f"lexicons {origin}: malformed ({type(exc).__name__}: {exc})"
        ) from None
