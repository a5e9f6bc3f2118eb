"""The card's thresholds: a versioned TOML file (``thresholds_v4.toml`` holds the defaults).

A file is never edited once released: new keys come with a new version. Version 2 adds
``sensitivity_effect`` (the sensitivity rows, and the gate that keeps CLEAR from a judge not
shown to read); a version-1 file still loads and gives the version-1 card, without that gate.
Version 3 adds ``pressure_effect`` (the pressure rows, ``card.pressure``); a version-2 file
still loads and gives the version-2 card, without pressure rows. Version 4 adds
``max_wording_flip`` (the wording rows, ``card.wording``); a version-3 file still loads and
gives the version-3 card, without wording rows. Version 5 adds ``alt_test_epsilon``: the card's
alt-test rows (``card.alttest``) are read at that ε and a DOES-NOT-REPLACE row decides the exit
code; without it (versions 1 to 4, the default) an alt-test row is shown at the ε
``judgeprobe alttest`` was given and decides nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from judgeprobe.core.tomlfile import packaged_toml, read_toml

DEFAULT = "thresholds_v4.toml"


class Thresholds(BaseModel):
    """What makes a row BIASED, CLEAR or UNDERPOWERED (see the packaged file's comments)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: Literal[1, 2, 3, 4, 5]
    fdr: float = Field(gt=0.0, lt=1.0)
    alpha: float = Field(gt=0.0, lt=1.0)
    power: float = Field(gt=0.0, lt=1.0)
    cue_effect: float = Field(gt=0.0, le=1.0)
    position_effect: float = Field(gt=0.0, le=1.0)
    max_flip_rate: float = Field(ge=0.0, le=1.0)
    sensitivity_effect: float | None = Field(default=None, gt=0.0, le=1.0)  # version 2
    pressure_effect: float | None = Field(default=None, gt=0.0, le=1.0)  # version 3
    max_wording_flip: float | None = Field(default=None, ge=0.0, lt=1.0)  # version 4
    alt_test_epsilon: float | None = Field(default=None, ge=0.0, lt=1.0)  # version 5

    @model_validator(mode="after")
    def _keys_of_version(self) -> Thresholds:
        """Each version needs its keys (those of every version since, module docstring).

        An earlier version does not know the later keys.
        """
        keys = (
            ("sensitivity_effect", 2),
            ("pressure_effect", 3),
            ("max_wording_flip", 4),
            ("alt_test_epsilon", 5),
        )
        for key, since in keys:
            given = getattr(self, key) is not None
            if self.version >= since and not given:
                raise ValueError(f"version {self.version} needs {key}")
            if self.version < since and given:
                raise ValueError(f"{key} needs version >= {since}")
        return self


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
