"""``judgeprobe metrics JUDGMENTS.parquet|RUN_DIR [--out FILE] [--ci FILE] [--by COLUMN]``.

The metrics of any judgments file of the documented schema (or of a run directory's) — the
estimates table (printed and written to CSV) and the interval table (every metric with its
document-level 95 % interval, and the paired protocol and judge differences).
``--controlled`` instead fits the cue-controlled win rate (``metrics.controlled``) and writes
``controlled.csv`` and ``controlled_win_rates.csv`` beside the input.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.conditions import BLIND
from judgeprobe.core.cli import command_parser, guarded
from judgeprobe.metrics.compute import BREAKDOWNS, breakdown, compute_metrics
from judgeprobe.metrics.controlled import controlled, shown, shown_lengths
from judgeprobe.metrics.drift import default_drift
from judgeprobe.metrics.estimates import estimates_table
from judgeprobe.metrics.flags import add_arguments, from_arguments
from judgeprobe.metrics.load import counted_judgments, judgments_file
from judgeprobe.metrics.table import print_differences, print_table, write_csv
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES
from judgeprobe.runs.rundir import RunDir
from judgeprobe.text.lexicons import load_lexicons


def with_blind(frame: pl.DataFrame, path: Path) -> pl.DataFrame:
    """The table with its Blind condition named ``Blind``.

    One line when it has no rows or no Blind at all (every metric compares with Blind: the table
    would be all dashes).
    """
    if frame.height == 0:
        raise JudgeprobeError(f"{path}: no judgments (the table has no rows)")
    names = frame["condition"].unique().sort().to_list()
    if BLIND not in names:  # written by another tool, e.g. "blind"
        frame = frame.with_columns(
            condition=pl.when(pl.col("condition").str.to_lowercase() == BLIND.lower())
            .then(pl.lit(BLIND))
            .otherwise(pl.col("condition"))
        )
    if BLIND not in frame["condition"]:
        raise JudgeprobeError(
            f"{path}: no {BLIND} condition (conditions: {', '.join(map(str, names))}); "
            f"every metric compares a condition with {BLIND}"
        )
    return frame


def check_out(out: Path, flag: str = "--out") -> None:
    """A file can be written at ``out`` (checked before any work is done)."""
    if out.is_dir():
        raise JudgeprobeError(f"{flag} {out}: is a directory; name a file")
    if not out.parent.is_dir():
        raise JudgeprobeError(f"{flag} {out}: no such directory {out.parent}")


def _write(table: pl.DataFrame, out: Path, flag: str) -> None:
    try:
        write_csv(table, out)
    except OSError as exc:
        raise JudgeprobeError(f"{flag} {out}: cannot write ({exc.strerror})") from None


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``judgeprobe metrics``: judgments in, metric tables out."""
    parser = command_parser("metrics", __doc__)
    parser.add_argument("judgments", type=Path)
    parser.add_argument(
        "--out", type=Path,
        help="CSV to write (default: metrics.csv beside the input; with --controlled, the "
        "model's terms, default controlled.csv, its win rates beside it as NAME_win_rates.csv)",
    )  # fmt: skip
    parser.add_argument(
        "--ci", type=Path, help="interval table to write (default: metrics_ci.csv beside it)"
    )
    parser.add_argument("--by", choices=BREAKDOWNS, help="break every metric down by this")
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--lexicons", type=Path, help="override the explanation lexicons (TOML)")
    parser.add_argument(
        "--controlled", action="store_true", help="fit the cue-controlled win rate instead"
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    args.judgments = judgments_file(args.judgments)  # a run directory names its table
    if args.controlled:
        return controlled_main(args.judgments, args.seed, args.out)
    beside = RunDir(args.judgments.parent)  # a run's table: its metrics go into its run
    out = args.out or beside.metrics
    ci = args.ci or beside.metrics_ci
    check_out(out)
    check_out(ci, "--ci")
    if args.resamples < 0:
        raise JudgeprobeError("--resamples must be >= 0")
    lex = load_lexicons(args.lexicons)
    frame = with_blind(counted_judgments(args.judgments), args.judgments)
    limits = from_arguments(args)
    if args.by is None:
        table = estimates_table(frame, limits)
    else:
        table = breakdown(frame, args.by, lambda part: estimates_table(part, limits))
    tidy = compute_metrics(frame, lex, default_drift()[0], args.resamples, args.seed, args.by)
    _write(table, out, "--out")
    _write(tidy, ci, "--ci")
    print_table(table)
    print_differences(tidy)
    print(f"wrote {out} and {ci}")
    return 0


def controlled_main(path: Path, seed: int, out: Path | None = None) -> int:
    """``--controlled``: the model's terms and the sources' win rates, printed and written.

    The terms go to ``out`` (default: ``controlled.csv`` beside the judgments), the win rates
    beside it (``NAME_win_rates.csv``), so a read-only run directory can still be fitted.
    """
    out = out or RunDir(path.parent).controlled
    check_out(out)
    frame = with_blind(counted_judgments(path), path)
    terms, rates = controlled(frame, shown_lengths(RunDir(path.parent).manifest_or_none()), seed)
    if terms.is_empty():
        raise JudgeprobeError(f"{path}: no judge × protocol with a model to fit (two documents)")
    outs = {out: terms, out.with_name(f"{out.stem}_win_rates.csv"): rates}
    for written, table in outs.items():
        _write(table, written, "--out")
    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=200,
        fmt_str_lengths=40,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
    ):
        for title, table in shown(terms, rates).items():
            print(f"cue-controlled model, {title}:")
            print(table if not table.is_empty() else "(fewer than two sources)")
    print(f"wrote {', '.join(map(str, outs))}")
    return 0


cli = guarded(main)
"""The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""


if __name__ == "__main__":
    sys.exit(cli())
