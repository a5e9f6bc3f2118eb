"""``judgeprobe report RUN_DIR``.

Every metric with 95% intervals, as report.html (self-contained), report.md with plots/, and
metrics_ci.csv.
"""

from __future__ import annotations

import sys
from pathlib import Path

from judgeprobe import JudgeprobeError
from judgeprobe.core.cli import command_parser, guarded
from judgeprobe.metrics.compute import BREAKDOWNS
from judgeprobe.metrics.flags import add_arguments, from_arguments, run_limits
from judgeprobe.metrics.load import load_run
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES
from judgeprobe.report.logs import logs_report
from judgeprobe.report.run import run_report
from judgeprobe.runs.rundir import RunDir
from judgeprobe.text.lexicons import load_lexicons


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``judgeprobe report``: rebuild a run's report from its files."""
    parser = command_parser("report", __doc__)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--lexicons", type=Path, help="override the explanation lexicons (TOML)")
    parser.add_argument(
        "--by", choices=BREAKDOWNS, help="add the key metrics broken down by domain or subset"
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    if args.resamples < 0:
        raise JudgeprobeError("--resamples must be >= 0")
    found = RunDir(args.run_dir).manifest_or_none()
    if found is not None and found.kind == "logs" and RunDir(args.run_dir).judgments.is_file():
        path = logs_report(args.run_dir, args.resamples, args.seed)  # reads only what it counts
        print(f"wrote {path} and {path.with_suffix('.md')}")
        return 0
    run = load_run(args.run_dir)  # a missing or corrupt part is one error line
    limits = from_arguments(args, run_limits(run.manifest))
    path = run_report(
        run,
        load_lexicons(args.lexicons),
        args.resamples,
        args.seed,
        limits=limits,
        by=args.by,
    )
    print(f"wrote {path} and {path.with_suffix('.md')}")
    return 0


cli = guarded(main)
"""The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""


if __name__ == "__main__":
    sys.exit(cli())
