"""A cue run's derived outputs, written from its judgments table.

metrics.csv, the printed metric table and the report (``judgeprobe.report.run``).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
from rich.console import Console

from judgeprobe.metrics.estimates import estimates_table
from judgeprobe.metrics.flags import run_limits
from judgeprobe.metrics.table import print_table, write_csv
from judgeprobe.report.run import run_report
from judgeprobe.runs.rundir import read_manifest
from judgeprobe.text.lexicons import load_lexicons


def write_outputs(out: Path, frame: pl.DataFrame, console: Console) -> int:
    """Metrics, the printed table and the report from a judgments table; the Invalid count."""
    table = estimates_table(frame, run_limits(read_manifest(out)))
    write_csv(table, out / "metrics.csv")
    print_table(table)
    report = run_report(out, load_lexicons(None))
    console.print(f"report: {report}")
    return int((frame["verdict"] == "Invalid").sum())
