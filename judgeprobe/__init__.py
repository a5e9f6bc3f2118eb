"""judgeprobe: audit whether LLM judges decide on the evidence or on cues that should not matter."""

__version__ = "0.1.0"


class JudgeprobeError(Exception):
    """A user-facing error: the CLI prints its message on one line and exits non-zero."""
