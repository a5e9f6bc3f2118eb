"""TOML files a user may give (configs, thresholds, lexicons): read and validated, or one line.

Every such file fails the same way: ``WHAT ORIGIN: no such file`` (or a folder, unreadable,
not valid TOML, or the first field pydantic rejects, with its value), never a traceback. The
packaged defaults go through the same path, so a user's copy of one is checked exactly as the
original is.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from judgeprobe import JudgeprobeError, first_error

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class TomlFile:
    """A parsed TOML file, its bytes (to hash) and where it came from (for messages)."""

    data: dict[str, Any]
    raw: bytes
    origin: str
    what: str

    def validated(self, model: type[M]) -> M:
        """The file as ``model``, or one line naming the field and value at fault."""
        try:
            return model.model_validate(self.data)
        except ValidationError as exc:
            found = first_error(exc, "file", value=True)
            raise JudgeprobeError(f"{self.what} {self.origin}: {found}") from None


def read_toml(path: Path, what: str) -> TomlFile:
    """A user's TOML file; ``what`` names it in errors ("config", "thresholds", …)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise JudgeprobeError(f"{what} {path}: no such file") from None
    except IsADirectoryError:
        raise JudgeprobeError(f"{what} {path}: is a directory, not a TOML file") from None
    except OSError as exc:
        raise JudgeprobeError(f"{what} {path}: cannot read ({exc.strerror})") from None
    return _parsed(raw, str(path), what)


def packaged_toml(package: str, name: str, what: str) -> TomlFile:
    """A TOML file shipped inside ``package`` (a default a user's file may replace)."""
    raw = resources.files(package).joinpath(name).read_bytes()
    return _parsed(raw, f"builtin {name}", what)


def _parsed(raw: bytes, origin: str, what: str) -> TomlFile:
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise JudgeprobeError(f"{what} {origin}: not valid TOML: {exc}") from None
    return TomlFile(data, raw, origin, what)
