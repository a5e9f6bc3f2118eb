"""``judgeprobe card RUN_DIR [--thresholds FILE]``: the judge card of a run.

Writes card.md, card.html, card.csv, card.json and card_silent.csv into RUN_DIR, prints the
verdicts, and exits 0 when every row is CLEAR, 5 when any row is BIASED, 7 when none is BIASED
but the judge was not shown to read the texts (a row INSENSITIVE), 6 when none is BIASED or
INSENSITIVE but some are UNDERPOWERED (2: bad input). ``--summary-md FILE`` also writes the
short pull-request summary (``card.gate``: verdict counts, each row that does not pass with its
sentence, where the full card is), the text the GitHub Action puts on a job's summary.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.table import Table

from judgeprobe import JudgeprobeError
from judgeprobe.card.from_run import checked_card
from judgeprobe.card.gate import read_card, summary_markdown
from judgeprobe.card.render import display, summary
from judgeprobe.core.cells import literal
from judgeprobe.core.cli import command_parser, guarded
from judgeprobe.core.files import write_atomic
from judgeprobe.metrics.table import table_console
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES
from judgeprobe.runs.rundir import RunDir, check_writable_dir

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
    parser.add_argument("--summary-md", type=Path, metavar="FILE",
                        help="also write the short pull-request summary (Markdown)")  # fmt: skip
    parser.add_argument("--summary-where", metavar="TEXT",
                        help="where the summary says the full card is (default: card.html's "
                        "path)")  # fmt: skip
    parser.add_argument("--summary-strict", action="store_true",
                        help="the summary's gate fails on UNDERPOWERED rows too")  # fmt: skip
    args = parser.parse_args(argv)
    if args.summary_md is not None:  # a bad path is one line before the card is computed
        check_writable_dir(args.summary_md.parent, "--summary-md")
        if args.summary_md.is_dir():
            raise JudgeprobeError(f"--summary-md {args.summary_md}: is a directory")
    card = checked_card(args.run_dir, thresholds=args.thresholds, lexicons=args.lexicons,
                        resamples=args.resamples, seed=args.seed)  # fmt: skip
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
    if args.summary_md is not None:
        where = args.summary_where or str(run.card_html)
        text = summary_markdown(read_card(run.card_json), where, strict=args.summary_strict)
        args.summary_md.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(args.summary_md, text)
        print(f"wrote {args.summary_md}")
    return card.exit_code


cli = guarded(main)
"""The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""


if __name__ == "__main__":
    sys.exit(cli())
