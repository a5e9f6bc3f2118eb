"""Planted runs for the gate's tests: run directories judged by the self-test's simulated judges.

``simulated_run`` writes the judgments of one of ``selftest.verdict_rates``' judges on the
paper's design (the sweep's own plan, verdicts drawn per judgment) as a run directory and makes
its card with ``judgeprobe card``'s path: the ``null`` judge reads and has no bias (CLEAR,
SENSITIVE rows, a NOISY repeat row at 1,500 documents; UNDERPOWERED at a few dozen); the
``label`` judge always picks the cue's target (BIASED and INSENSITIVE rows). The rows and
their verdicts are the card's, never written here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import numpy as np
import polars as pl

from judgeprobe.card.from_run import checked_card
from judgeprobe.card.thresholds import load_thresholds
from judgeprobe.runs.rundir import RunDir
from judgeprobe.selftest.verdict_rates import (
    JudgeName,
    Truth,
    draw_verdicts,
    paper_design,
    plan_table,
)

CLEAR_DOCUMENTS = 1_500  # where the null judge's cue and position rows have the power for CLEAR


@cache
def _plan(documents: int) -> pl.DataFrame:
    return plan_table(paper_design(documents))


def simulated_run(
    out: Path, judge: JudgeName, documents: int = CLEAR_DOCUMENTS, *, name: str | None = None
) -> Path:
    """A run directory of ``judge``'s verdicts on ``documents`` documents, its card written.

    ``name``: the judge's name in the run (default ``judge``).
    """
    plan = _plan(documents)
    drawn = draw_verdicts(
        judge, Truth.of(plan), np.random.default_rng(0), load_thresholds(), against_placebo=True
    )
    verdicts = pl.Series(np.array(["Tie", "A", "B"])[drawn], dtype=pl.String)
    run = RunDir(out)
    out.mkdir(parents=True, exist_ok=True)
    plan.with_columns(judge=pl.lit(name or judge), verdict=verdicts).write_parquet(run.judgments)
    run.write_manifest({"run_id": out.name, "created_at": datetime.now(UTC).isoformat()})
    checked_card(out, resamples=200)
    return out
