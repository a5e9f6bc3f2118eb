"""Shared CLI behaviour: user errors are one line on stderr and a non-zero exit."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Protocol

from judgeprobe import JudgeprobeError

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130

#: The console script every command runs under (``judgeprobe COMMAND``).
PROG = "judgeprobe"


#: What a command that sends requests says on Ctrl-C (every finished result is in its store).
RESUME = "results so far are stored; rerun with --resume"


def command_parser(command: str, description: str | None) -> argparse.ArgumentParser:
    """The parser of ``judgeprobe COMMAND``: its usage, help and errors name what a user types.

    The same under ``python -m judgeprobe.X``, which runs the same command.
    """
    return argparse.ArgumentParser(prog=f"{PROG} {command}", description=description)


def main_guard(main: Callable[[], int], on_interrupt: str = "run the command again") -> int:
    """Run ``main``; turn a JudgeprobeError or Ctrl-C into one line and an exit code.

    ``on_interrupt`` says how the command continues after Ctrl-C: a sweep resumes
    (``RESUME``), the builder reruns, a table or report command simply runs again.
    """
    try:
        return main()
    except JudgeprobeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print(f"interrupted: {on_interrupt}", file=sys.stderr)
        return EXIT_INTERRUPTED


class Command(Protocol):
    """A command as its console entry calls it: its arguments (None: sys.argv) → exit code."""

    def __call__(self, argv: list[str] | None = None) -> int:
        """Run the command."""
        ...


def guarded(
    main: Callable[[list[str] | None], int], on_interrupt: str = "run the command again"
) -> Command:
    """A command's ``cli``: ``main`` as a user runs it, through ``main_guard``."""

    def cli(argv: list[str] | None = None) -> int:
        return main_guard(lambda: main(argv), on_interrupt)

    return cli
