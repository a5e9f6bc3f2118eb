"""A cue run's derived outputs, written from its judgments table.

metrics.csv, the printed metric table and the report (``judgeprobe.report.run``).
"""

from __future__ import annotations

from rich.console import Console

from judgeprobe.core.records import INVALID
from judgeprobe.metrics.estimates import estimates_table
from judgeprobe.metrics.flags import run_limits
from judgeprobe.metrics.load import LoadedRun
from judgeprobe.metrics.table import print_table, write_csv
from judgeprobe.report.run import run_report
from judgeprobe.text.lexicons import load_lexicons


def write_outputs(run: LoadedRun, console: Console) -> int:
    """Metrics, the printed table and the report from the run's table; the Invalid count."""
    table = estimates_table(run.judgments, run_limits(run.manifest))
    write_csv(table, run.dir.metrics)
    print_table(table)
    report = run_report(run, load_lexicons(None))
    console.print(f"report: {report}")
    return int((run.judgments["verdict"] == INVALID).sum())
