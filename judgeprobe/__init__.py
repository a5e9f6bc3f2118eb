"""judgeprobe: audit whether LLM judges decide on the evidence or on cues that should not matter."""

from pydantic import ValidationError

__version__ = "0.1.0"


class JudgeprobeError(Exception):
    """A user-facing error: the CLI prints its message on one line and exits non-zero."""


def first_error(exc: ValidationError, whole: str = "value") -> str:
    """``field.path: message`` for the first problem pydantic found (``whole`` if no path)."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or whole
    return f"{where}: {err['msg']}"
