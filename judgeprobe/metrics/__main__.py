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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m judgeprobe.metrics", description=__doc__)
    parser.add_argument("judgments", type=Path)
    parser.add_argument(
        "--out", type=Path, help="CSV to write (default: metrics.csv beside the input)"
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    table = outcome_table(load_judgments(args.judgments), from_arguments(args))
    print_table(table)
    out = args.out or args.judgments.with_name("metrics.csv")
    write_csv(table, out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main_guard(main))
