"""``judgeprobe COMMAND [ARGS]``: one console script for every stage.

Each command is the module a user could also run with ``python -m``; it is imported only when
called, so ``judgeprobe --help`` and a mistyped command cost no heavy import.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from typing import cast

from judgeprobe.core.cli import PROG

COMMANDS = {
    "run": ("judgeprobe.cue.run", "run a cue sweep end to end (config → judgments → report)"),
    "metrics": ("judgeprobe.metrics.__main__", "metric tables of a judgments file"),
    "report": ("judgeprobe.report.__main__", "the HTML/Markdown report of a run"),
    "card": ("judgeprobe.card.__main__", "the judge card: one verdict per cue, exit code for CI"),
    "compare": (
        "judgeprobe.compare.__main__",
        "runs on the same items compared row by row, each against the first",
    ),
    "calibrate": (
        "judgeprobe.calibrate.__main__",
        "human-calibrated win rates or scores, their intervals and label budgets",
    ),
    "alttest": (
        "judgeprobe.calibrate.alttest",
        "the alternative annotator test: can the judge replace the annotators?",
    ),
    "annotate": ("judgeprobe.annotate.__main__", "human annotation forms and agreement"),
    "review": ("judgeprobe.review.__main__", "review a run's generated texts in the browser"),
    "candidates": ("judgeprobe.candidates.__main__", "build a candidate set from a corpus"),
    "rubric": ("judgeprobe.rubric.__main__", "the rubric probe (second paper)"),
    "selfpref": ("judgeprobe.selfpref.__main__", "self-preference items from two candidate sets"),
    "logs": ("judgeprobe.logs.__main__", "read a judge's logs into a run (no judge called)"),
    "selftest": ("judgeprobe.selftest.__main__", "plant biases in a simulated judge, recover them"),
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Audit LLM judges. `judgeprobe COMMAND --help` describes each command.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_, about) in COMMANDS.items():
        sub.add_parser(name, help=about, add_help=False)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one command with the arguments after its name (its own parser reads them)."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in COMMANDS:
        _parser().parse_args(args)  # prints usage, exits 2 (or 0 for --help)
    module = importlib.import_module(COMMANDS[args[0]][0])
    command = cast(Callable[[list[str]], int], module.cli)
    return command(args[1:])


if __name__ == "__main__":
    sys.exit(main())
