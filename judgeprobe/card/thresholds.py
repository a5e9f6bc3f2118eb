"""The card's thresholds: a versioned TOML file (``thresholds_v1.toml`` holds the defaults)."""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judgeprobe import JudgeprobeError, first_error

DEFAULT = "thresholds_v1.toml"


class Thresholds(BaseModel):
    """What makes a row BIASED, CLEAR or UNDERPOWERED (see the packaged file's comments)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: Literal[1]
    fdr: float = Field(gt=0.0, lt=1.0)
    alpha: float = Field(gt=0.0, lt=1.0)
    power: float = Field(gt=0.0, lt=1.0)
    cue_effect: float = Field(gt=0.0, le=1.0)
    position_effect: float = Field(gt=0.0, le=1.0)
    max_flip_rate: float = Field(ge=0.0, le=1.0)


@dataclass(frozen=True)
class LoadedThresholds:
    """Thresholds with where they came from and the file's hash (printed on the card)."""

    values: Thresholds
    origin: str
    sha256: str


def load_thresholds(path: Path | None = None) -> LoadedThresholds:
    """The packaged defaults, or a user's file.

    A user's file must give every key: a card never mixes a user's thresholds with silent
    defaults.
    """
    if path is None:
        data = resources.files(__package__).joinpath(DEFAULT).read_bytes()
        origin = f"builtin {DEFAULT}"
    else:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise JudgeprobeError(f"thresholds {path}: {exc.strerror}") from None
        origin = str(path)
    try:
        values = Thresholds.model_validate(tomllib.loads(data.decode("utf-8")))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise JudgeprobeError(f"thresholds {origin}: not valid TOML ({exc})") from None
    except ValidationError as exc:
        raise JudgeprobeError(f"thresholds {origin}: {first_error(exc, value=True)}") from None
    return LoadedThresholds(values, origin, hashlib.sha256(data).hexdigest())
