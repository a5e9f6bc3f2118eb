"""judgeprobe: audit whether LLM judges decide on the evidence or on cues that should not matter."""

import re

from pydantic import ValidationError

__version__ = "0.1.0"


class JudgeprobeError(Exception):
    """A user-facing error: the CLI prints its message on one line and exits non-zero."""


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
