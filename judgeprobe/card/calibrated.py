"""The human-calibrated estimates (``judgeprobe calibrate``) as a section of the card and report.

Read from ``RUN/calibrated.csv`` when the run has one: each model's judge-only, human-only and
calibrated estimate with its interval, and the label budget, so the card that says BIASED also
gives the number to report instead. Its own section, beside the card's rows (no verdict).
"""

from __future__ import annotations

import polars as pl

from judgeprobe.card.record import CalibratedEstimate, Estimate
from judgeprobe.metrics.calibrated import CALIBRATED_SCHEMA
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


def read_calibrated(run: RunDir) -> pl.DataFrame | None:
    """The run's calibrated.csv, or None when it has none (or not one this version can read)."""
    if not run.calibrated.is_file():
        return None
    try:
        frame = pl.read_csv(run.calibrated, schema=CALIBRATED_SCHEMA)
    except (OSError, pl.exceptions.PolarsError):
        return None
    return frame


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def calibrated_display(frame: pl.DataFrame) -> pl.DataFrame:
    """The table as the card and the report show it."""
    rows = []
    for r in frame.iter_rows(named=True):
        ci = "–" if r["calibrated"] is None else (
            f"{_num(r['calibrated'])} [{_num(r['lo'])}, {_num(r['hi'])}]")  # fmt: skip
        budget = r["labels_for_halfwidth"]
        more = "–" if r["calibrated"] is None else (
            "not reachable" if budget is None else str(budget))  # fmt: skip
        aim = f"labels for ±{r['target_halfwidth']:g}" if r["target_halfwidth"] else "labels for ±H"
        rows.append({
            "judge": r["judge"], "protocol": r["protocol"], "model": r["model"],
            "estimate": r["estimate"], "items": str(r["n_items"]), "labels": str(r["n_labels"]),
            "judge only": _num(r["judge_only"]), "human only": _num(r["human_only"]),
            "calibrated [95% CI]": ci,
            aim: more,
        })  # fmt: skip
    return pl.DataFrame(rows)


def calibrated_sections(run: RunDir) -> list[Section]:
    """The section; none for a run never calibrated."""
    frame = read_calibrated(run)
    if frame is None or frame.is_empty():
        return []
    return [Section(TITLE, NOTE, tables=[calibrated_display(frame)])]


def calibrated_estimates(run: RunDir) -> tuple[CalibratedEstimate, ...]:
    """The run's calibrated figures as the card's records, so ``card.json`` carries them too."""
    frame = read_calibrated(run)
    if frame is None:
        return ()
    return tuple(
        CalibratedEstimate(
            judge=r["judge"],
            protocol=r["protocol"],
            quantity=f"{r['estimate']} of {r['model']}",
            raw=Estimate.of(r["judge_only"], None, None),
            calibrated=Estimate(value=r["calibrated"], lo=r["lo"], hi=r["hi"]),
            method=f"PPI++ (ppi-python): {r['n_labels']} human labels of {r['n_items']} items",
        )
        for r in frame.iter_rows(named=True)
    )
