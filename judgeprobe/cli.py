"""Shared CLI behaviour: user errors are one line on stderr and a non-zero exit."""

from __future__ import annotations

import sys
from collections.abc import Callable

from judgeprobe import JudgeprobeError

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130


def main_guard(main: Callable[[], int]) -> int:
    """Run ``main``; turn a JudgeprobeError or Ctrl-C into one line and an exit code."""
    try:
        return main()
    except JudgeprobeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("interrupted: results so far are stored; rerun with --resume", file=sys.stderr)
        return EXIT_INTERRUPTED
