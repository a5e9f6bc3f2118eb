"""The alt-test as card rows: can each judge × protocol replace the run's annotators?

Read from ``RUN/alttest.csv`` (``judgeprobe alttest RUN``), one ``alt-test`` row per judge ×
protocol: the winning rate ω at ε as its effect, ρ beside it, and REPLACES when ω ≥ ½, else
DOES-NOT-REPLACE. The ε is the thresholds file's ``alt_test_epsilon`` (version 5), where the row
gates the exit code; else the ε the command was given, and the row decides nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.card.kinds.alttest import DOES_NOT_REPLACE, REPLACES, AltTestRow
from judgeprobe.card.thresholds import Thresholds
from judgeprobe.core.estimate import Estimate
from judgeprobe.metrics.alttest import ALTTEST_SCHEMA, FDR, MIN_ITEMS, REPLACES_AT
from judgeprobe.runs.rundir import RunDir

TEST = (
    f"per annotator left out, a one-sided paired t-test of H0: mean(W_annotator − W_judge) ≥ ε; "
    f"Benjamini–Yekutieli at {FDR} across the annotators with {MIN_ITEMS}+ counted items"
)


def gates(t: Thresholds) -> bool:
    """The thresholds file gates on the alt-test (version 5: ``alt_test_epsilon``)."""
    return t.alt_test_epsilon is not None


def _read(run: RunDir) -> pl.DataFrame:
    try:
        return pl.read_csv(run.alttest, schema=ALTTEST_SCHEMA)
    except (OSError, pl.exceptions.PolarsError):
        raise JudgeprobeError(
            f"{run.alttest}: not an alt-test table this version reads; run `judgeprobe alttest "
            f"{run.path}` again"
        ) from None


def _at(table: pl.DataFrame, t: Thresholds, run: RunDir) -> pl.DataFrame:
    """Each judge × protocol's row at the ε the card reads."""
    if t.alt_test_epsilon is None:
        return table.filter(pl.col("chosen"))
    eps = t.alt_test_epsilon
    found = table.filter((pl.col("epsilon") - eps).abs() < 1e-9)
    cells = table.select("judge", "protocol").unique().height
    if found.height < cells:
        raise JudgeprobeError(
            f"{run.alttest}: no row at ε = {eps:g}, which the thresholds gate on; run "
            f"`judgeprobe alttest {run.path} --epsilon {eps:g}`"
        )
    return found


@dataclass(frozen=True)
class _Found:
    """One judge × protocol's line of alttest.csv at the ε the card reads."""

    judge: str
    protocol: str
    epsilon: float
    omega: float
    rho: float
    tested: int
    untested: int
    items: int

    def row(self, *, gating: bool) -> AltTestRow:
        """The card row."""
        untested = (
            f"; {self.untested} annotators with fewer than {MIN_ITEMS} counted items not tested"
            if self.untested
            else ""
        )
        decides = "decides the exit code" if gating else "decides no exit code (thresholds v5 gate)"
        return AltTestRow(
            judge=self.judge, protocol=self.protocol, row="alt-test", n=self.items,
            effect_name="winning rate ω (annotators beaten)", effect=Estimate(value=self.omega),
            test=TEST, threshold=REPLACES_AT,
            verdict=REPLACES if self.omega >= REPLACES_AT else DOES_NOT_REPLACE,
            epsilon=self.epsilon, advantage_probability=self.rho, annotators=self.tested,
            untested=self.untested, gates=gating,
            note=(f"at ε = {self.epsilon:g}: the judge beats {round(self.omega * self.tested)} "
                  f"of {self.tested} annotators (ω ≥ {REPLACES_AT} replaces); advantage "
                  f"probability ρ = {self.rho:.2f}; {self.items} counted items{untested}; "
                  f"{decides}"),
        )  # fmt: skip


def alttest_rows(run: RunDir, t: Thresholds) -> tuple[AltTestRow, ...]:
    """The run's alt-test rows (none when ``judgeprobe alttest`` never ran on it).

    Under a thresholds file that gates on the alt-test, a run without its table is an error: a
    gate that passes because nothing was tested would vouch for nothing.
    """
    if not run.alttest.is_file():
        if gates(t):
            raise JudgeprobeError(
                f"{run.path}: the thresholds gate on the alt-test (alt_test_epsilon) but the "
                f"run has no {run.alttest.name}; run `judgeprobe alttest {run.path}` first"
            )
        return ()
    at = _at(_read(run), t, run).sort("judge", "protocol")
    columns = ("judge", "protocol", "epsilon", "winning_rate", "advantage_probability",
               "annotators", "untested", "items")  # fmt: skip
    return tuple(_Found(*r).row(gating=gates(t)) for r in at.select(columns).iter_rows())
