"""``python -m judgeprobe.metrics JUDGMENTS.parquet [--out FILE]``: outcome metrics of any
judgments file of the documented schema, printed as a table and written to CSV."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.cli import main_guard
from judgeprobe.metrics.flags import add_arguments, from_arguments
from judgeprobe.metrics.outcome import REQUIRED, outcome_table
from judgeprobe.metrics.table import print_table, write_csv
from judgeprobe.metrics.units import BLIND


def load_judgments(path: Path) -> pl.DataFrame:
    if not path.is_file():
        raise JudgeprobeError(f"{path}: no such file")
    try:
        frame = pl.read_parquet(path)
    except Exception as exc:  # polars raises several unrelated types for bad files
        raise JudgeprobeError(
            f"{path}: not a readable Parquet file ({type(exc).__name__})"
        ) from None
    missing = REQUIRED - set(frame.columns)
    if missing:
        raise JudgeprobeError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
    return frame


def with_blind(frame: pl.DataFrame, path: Path) -> pl.DataFrame:
    """The table with its Blind condition named ``Blind``; one line when it has no rows or
    no Blind at all (every metric compares with Blind: the table would be all dashes)."""
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


def check_out(out: Path) -> None:
    """A file can be written at ``out`` (checked before any work is done)."""
    if out.is_dir():
        raise JudgeprobeError(f"--out {out}: is a directory; name a file")
    if not out.parent.is_dir():
        raise JudgeprobeError(f"--out {out}: no such directory {out.parent}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m judgeprobe.metrics", description=__doc__)
    parser.add_argument("judgments", type=Path)
    parser.add_argument(
        "--out", type=Path, help="CSV to write (default: metrics.csv beside the input)"
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    out = args.out or args.judgments.with_name("metrics.csv")
    check_out(out)
    frame = with_blind(load_judgments(args.judgments), args.judgments)
    table = outcome_table(frame, from_arguments(args))
    try:
        write_csv(table, out)
    except OSError as exc:
        raise JudgeprobeError(f"--out {out}: cannot write ({exc.strerror})") from None
    print_table(table)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main_guard(main))
