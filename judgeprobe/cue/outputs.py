"""A cue run's derived outputs, written from its judgments table.

metrics.csv, the printed metric table and the report, which is composed here: the report's own
sections, handed the judge card (with the battery view), the self-preference and cue-controlled
sections (runs with such conditions) and, when the run directory holds them, the rubric probe's
results. A sweep (live or on Ray), a batch import, ``judgeprobe report`` and a rubric run
beside a cue run all write the report through ``run_report``.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
from rich.console import Console

from judgeprobe.card.section import card_sections
from judgeprobe.metrics.estimates import estimates_table
from judgeprobe.metrics.flags import Readability, run_limits
from judgeprobe.metrics.table import print_table, write_csv
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES
from judgeprobe.report.compose import write_report
from judgeprobe.report.controlled import controlled_sections
from judgeprobe.report.selfpref import selfpref_sections
from judgeprobe.rubric.report import rubric_sections
from judgeprobe.runs.rundir import read_manifest
from judgeprobe.text.lexicons import Lexicons, load_lexicons


def run_report(
    run_dir: Path,
    lex: Lexicons,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    console: Console | None = None,
    limits: Readability | None = None,
    by: str | None = None,
) -> Path:
    """The run's report with the judge card and any rubric results in it; the HTML path."""
    return write_report(
        run_dir, lex, resamples, seed, console,
        handed=[
            lambda j, tidy: card_sections(j, tidy, lex, resamples, seed),
            lambda j, _tidy: selfpref_sections(j, resamples, seed),
            lambda j, _tidy: controlled_sections(j, run_dir, seed),
            lambda _j, _tidy: rubric_sections(run_dir),
        ],
        limits=limits, by=by,
    )  # fmt: skip


def write_outputs(out: Path, frame: pl.DataFrame, console: Console) -> int:
    """Metrics, the printed table and the report from a judgments table; the Invalid count."""
    table = estimates_table(frame, run_limits(read_manifest(out)))
    write_csv(table, out / "metrics.csv")
    print_table(table)
    report = run_report(out, load_lexicons(None))
    console.print(f"report: {report}")
    return int((frame["verdict"] == "Invalid").sum())
