"""The human-calibrated estimates (``judgeprobe calibrate``) as a section of the card and report.

Read from ``RUN/calibrated.json`` (``metrics.calibrated.CalibratedFile``) when the run has one:
each model's judge-only, human-only and calibrated estimate with its interval, and the label
budget, so the card that says BIASED also gives the number to report instead. Its own section,
beside the card's rows (no verdict). ``calibrated.csv`` beside it is for people; nothing here
reads it.
"""

from __future__ import annotations

import polars as pl
from pydantic import ValidationError

from judgeprobe.card.record import CalibratedEstimate, Estimate
from judgeprobe.core.estimate import shown
from judgeprobe.metrics.calibrated import CalibratedFile, CalibratedRow
from judgeprobe.render.page import Section
from judgeprobe.runs.rundir import RunDir

TITLE = "Calibrated estimates"
NOTE = (
    "Each model's win rate (Ties ½) or mean score as people would judge it "
    "(`judgeprobe calibrate`): the judge's verdicts on every item combined with human labels on a "
    "uniform random sample of them (prediction-powered inference, PPI++), with its 95% interval; "
    "beside it the judge alone and the labelled items alone, and the further random labels "
    "that would bring the interval to ±H."
)


def read_calibrated(run: RunDir) -> list[CalibratedRow] | None:
    """The run's calibrated.json rows, or None when it has none (or not one this version reads)."""
    try:
        return CalibratedFile.model_validate_json(run.calibrated_json.read_bytes()).rows
    except (OSError, ValidationError):
        return None


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def calibrated_display(rows: list[CalibratedRow]) -> pl.DataFrame:
    """The table as the card and the report show it."""
    out = []
    for r in rows:
        budget = r.labels_for_halfwidth
        more = "–" if r.calibrated is None else (
            "not reachable" if budget is None else str(budget))  # fmt: skip
        aim = f"labels for ±{r.target_halfwidth:g}" if r.target_halfwidth else "labels for ±H"
        out.append({
            "judge": r.judge, "protocol": r.protocol, "model": r.model,
            "estimate": r.estimate, "items": str(r.n_items), "labels": str(r.n_labels),
            "judge only": _num(r.judge_only), "human only": _num(r.human_only),
            "calibrated [95% CI]": shown(r.calibrated),
            aim: more,
        })  # fmt: skip
    return pl.DataFrame(out)


def calibrated_sections(run: RunDir) -> list[Section]:
    """The section; none for a run never calibrated."""
    rows = read_calibrated(run)
    if not rows:
        return []
    return [Section(TITLE, NOTE, tables=[calibrated_display(rows)])]


def calibrated_estimates(run: RunDir) -> tuple[CalibratedEstimate, ...]:
    """The run's calibrated figures as the card's records, so ``card.json`` carries them too."""
    return tuple(
        CalibratedEstimate(
            judge=r.judge,
            protocol=r.protocol,
            quantity=f"{r.estimate} of {r.model}",
            raw=Estimate.of(r.judge_only, None, None),
            calibrated=r.calibrated or Estimate(value=None),
            method=f"PPI++ (ppi-python): {r.n_labels} human labels of {r.n_items} items",
        )
        for r in read_calibrated(run) or []
    )
