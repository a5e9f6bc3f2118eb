"""``judgeprobe card RUN_DIR [--thresholds FILE]``: the judge card of a run.

Writes card.md, card.html, card.csv, card.json and card_silent.csv into RUN_DIR, prints the
verdicts, and exits 0 when every row is CLEAR, 5 when any row is BIASED, 7 when none is BIASED
but the judge was not shown to read the texts (a row INSENSITIVE), 6 when none is BIASED or
INSENSITIVE but some are UNDERPOWERED (2: bad input).
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.table import Table

from judgeprobe import JudgeprobeError
from judgeprobe.card.from_run import card_for_run
from judgeprobe.card.render import display, summary
from judgeprobe.core.cells import literal
from judgeprobe.core.cli import command_parser, main_guard
from judgeprobe.metrics.table import table_console
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES
from judgeprobe.runs.rundir import RunDir

TERMINAL = ["judge", "protocol", "row", "n (docs)", "effect of", "effect", "silent-cue", "q",
            "MDE", "verdict"]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``judgeprobe card``; the exit code says if the judge is biased."""
    parser = command_parser("card", __doc__)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--thresholds", type=Path, help="thresholds TOML (default: builtin v2)")
    parser.add_argument("--lexicons", type=Path, help="override the explanation lexicons (TOML)")
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the percentile bootstrap (κ with people)"
    )
    args = parser.parse_args(argv)
    judgments = RunDir(args.run_dir).judgments
    if not judgments.is_file():
        raise JudgeprobeError(f"{args.run_dir}: no {judgments.name} (is this a run directory?)")
    if args.resamples < 0:
        raise JudgeprobeError("--resamples must be >= 0")
    card = card_for_run(args.run_dir, args.thresholds, args.lexicons, args.resamples, args.seed)
    shown = display(card)
    wanted = (*TERMINAL[:-1], "settled", TERMINAL[-1])  # settled: a sequential run's rows
    shown = shown.select([c for c in wanted if c in shown.columns])
    view = Table(title="Judge card", header_style="bold")
    for column in shown.columns:
        view.add_column(column)
    for row in shown.iter_rows():
        view.add_row(*literal(row))
    table_console().print(view)
    print(summary(card))
    run = RunDir(args.run_dir)
    print(f"wrote {run.card_md}, {run.card_html} and {run.card_json}")
    return card.exit_code


def cli(argv: list[str] | None = None) -> int:
    """The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""
    return main_guard(lambda: main(argv))


if __name__ == "__main__":
    sys.exit(cli())
