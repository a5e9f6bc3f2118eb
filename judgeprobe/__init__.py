"""judgeprobe: audit whether LLM judges decide on the evidence or on cues that should not matter.

The public Python API is ``judgeprobe.api`` (docs/api.md): its names are reachable here too
(``judgeprobe.run``, ``judgeprobe.card`` …), imported on first use, so ``import judgeprobe``
stays cheap and this package, the lowest layer, imports nothing above it.
"""

import importlib
import re
import sys
import types
from typing import Any

from pydantic import ValidationError

__version__ = "0.1.0"


class JudgeprobeError(Exception):
    """A user-facing error: the CLI prints its message on one line and exits ``exit_code``.

    Every error judgeprobe raises for a user to act on is one of these (bad input, a run that
    could not finish); the message is the line the command prints after ``error:``.
    """

    exit_code: int = 2


class RunIncomplete(JudgeprobeError):
    """A run stopped with judgments left for a later pass (a deadline, pending batch answers)."""

    exit_code = 3


class JudgeUnreliable(JudgeprobeError):
    """A judge's share of Invalid judgments is above the run's ``fail_invalid_rate``."""

    exit_code = 4


#: The public API's names, looked up in ``judgeprobe.api`` on first use (``__getattr__``).
API = (
    "Card", "Run", "SelftestResult", "ProgressUpdate", "CalibratedRow", "Bill",
    "run", "arun", "plan", "aplan", "read_logs", "aread_logs", "card", "acard", "read_card",
    "calibrate", "acalibrate", "selftest", "aselftest",
)  # fmt: skip


def __getattr__(name: str) -> Any:
    """``judgeprobe.run`` and the rest of the API, from ``judgeprobe.api`` when first asked.

    Imported by name, not by an import statement: the package root stays the lowest layer.
    """
    if name in API:
        return getattr(importlib.import_module(f"{__name__}.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *API])


class CommandModule(types.ModuleType):
    """A subpackage named like an API function (``card``, ``calibrate``, ``selftest``, ``run``).

    Once imported it is what ``judgeprobe.card`` names, so calling it calls the API's function
    of the same name; its modules stay reachable as before (``judgeprobe.card.rows``).
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """``judgeprobe.api.NAME(*args, **kwargs)``."""
        api = importlib.import_module(f"{__name__}.api")
        return getattr(api, self.__name__.rpartition(".")[2])(*args, **kwargs)


def callable_command(name: str) -> None:
    """Make the module ``name`` (a subpackage's ``__name__``) call its API function."""
    sys.modules[name].__class__ = CommandModule


#: ``user:password@`` in a URL (also inside a longer text, such as a ``--judge`` flag).
_USERINFO = re.compile(r"(?<=://)[^/@\s]*@")
REDACTED = "***"


def scrub(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``***``."""
    return _USERINFO.sub(f"{REDACTED}@", text)


def first_error(exc: ValidationError, whole: str = "value", *, value: bool = False) -> str:
    """``field.path: message`` for the first problem pydantic found (``whole`` if no path).

    ``value``: also name the offending value (scalars only, credentials scrubbed), as config
    and flag errors do; reply errors leave it out so equal problems read alike.
    """
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or whole
    message = str(err["msg"]).removeprefix("Value error, ")
    got = err.get("input")
    if value and err["type"] != "missing" and isinstance(got, str | int | float | bool):
        message += f" (got {scrub(repr(got))[:120]})"
    return scrub(f"{where}: {message}")
