"""The card's thresholds: a versioned TOML file (``thresholds_v1.toml`` holds the defaults)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from judgeprobe.core.tomlfile import packaged_toml, read_toml

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
    found = (
        packaged_toml(__package__, DEFAULT, "thresholds")
        if path is None
        else read_toml(path, "thresholds")
    )
    values = found.validated(Thresholds)
    return LoadedThresholds(values, found.origin, hashlib.sha256(found.raw).hexdigest())
