"""Does the calibrated interval keep its promise, and the label budget its word? Seeded simulation.

Each repetition draws a finite population of N items between two models with known human
labels (model A's true win rate θ, ties ½, 20 % of labels Tie) and a judge that gives the human
label with probability ``agreement`` and otherwise another one at random (an unbiased judge) or
model A (a biased judge: its judge-only win rate is off by (1 − agreement)·(1 − θ)). n of the N
items are labelled, drawn uniformly; the true value is the mean human value over the N items
(the finite population ``calibrate`` estimates). Measured per setting:

- ``coverage``: the share of repetitions whose calibrated 95 % interval holds the true value;
- ``budget_kept``: the label budget's word. Each repetition asks for three quarters of the
  half-width it has; the recommended number of further labels is drawn uniformly from the
  unlabelled items, and the share of repetitions whose interval then reaches that half-width
  is counted (over those where a budget could be given: ``budgeted``).

``simulated_run`` writes one such population as a run directory (judgments.parquet,
manifest.json, labels.parquet): the worked example of docs/calibrate.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from judgeprobe.conditions import BLIND
from judgeprobe.core.records import JUDGMENT_SCHEMA, LABEL_SCHEMA
from judgeprobe.metrics.calibrated import Measured, estimate, labels_for_halfwidth
from judgeprobe.runs.rundir import RunDir

BOUND = 0.93
"""The least coverage a 95 % interval may show (docs/metrics.md: what an interval promises)."""
BUDGET_BOUND = 0.8
"""The least share of repetitions in which the recommended labels reach the half-width asked."""
TIE = 0.2
ASK = 0.75
"""The half-width each repetition asks the budget for, as a share of the one it has."""
LABELS = (20, 50, 200, 2000)
ITEMS = (100, 1_000, 10_000, 100_000)
AGREEMENT = (0.55, 0.75, 0.95)
VALUES = (0.5, 0.85)
REPETITIONS = 200
RESULT_SCHEMA = {
    "labels": pl.Int64(),
    "items": pl.Int64(),
    "agreement": pl.Float64(),
    "judge": pl.String(),  # "unbiased" or "biased" (toward model A)
    "value": pl.Float64(),  # model A's expected true win rate
    "repetitions": pl.Int64(),
    "coverage": pl.Float64(),
    "halfwidth": pl.Float64(),  # mean half-width of the calibrated interval
    "judge_bias": pl.Float64(),  # mean of judge-only minus the true value
    "budgeted": pl.Int64(),  # repetitions where a budget was given (reachable, below N)
    "budget_kept": pl.Float64(),
}


@dataclass(frozen=True)
class Setting:
    """One row of the table."""

    labels: int
    items: int
    agreement: float
    biased: bool
    value: float


def grid() -> list[Setting]:
    """Every setting of the full table (labels below the items)."""
    return [
        Setting(n, big_n, a, b, v)
        for n in LABELS
        for big_n in ITEMS
        if n < big_n
        for a in AGREEMENT
        for b in (False, True)
        for v in VALUES
    ]


def population(rng: np.random.Generator, s: Setting) -> tuple[np.ndarray, np.ndarray]:
    """Human values Y and judge values Ŷ of model A on N items."""
    u = rng.random(s.items)
    win = s.value - TIE / 2
    human = np.where(u < win, 1.0, np.where(u < win + TIE, 0.5, 0.0))
    judge = human.copy()
    wrong = rng.random(s.items) >= s.agreement
    if s.biased:
        judge[wrong] = 1.0
    else:
        other = rng.integers(0, 2, s.items) == 0
        for value, (first, second) in {1.0: (0.5, 0.0), 0.5: (1.0, 0.0), 0.0: (1.0, 0.5)}.items():
            here = wrong & (human == value)
            judge[here] = np.where(other[here], first, second)
    return human, judge


def _repetition(rng: np.random.Generator, s: Setting) -> tuple[bool, float, float, bool | None]:
    """Covered, half-width, judge bias, budget kept (None: no budget to check)."""
    human, judge = population(rng, s)
    truth = float(human.mean())
    order = rng.permutation(s.items)
    shown = np.full(s.items, np.nan)
    shown[order[: s.labels]] = human[order[: s.labels]]
    found = estimate(judge, shown)
    got = found.calibrated
    assert got is not None
    assert got.lo is not None
    assert got.hi is not None
    assert found.halfwidth is not None
    covered = got.lo <= truth <= got.hi
    bias = (found.judge_only or 0.0) - truth
    ask = ASK * found.halfwidth
    labelled = order[: s.labels]
    more = labels_for_halfwidth(Measured.of(human[labelled], judge[labelled], judge, (0.0, 1.0)),
                                s.labels, ask)  # fmt: skip
    if more is None or s.labels + more >= s.items:
        return covered, found.halfwidth, bias, None
    shown[order[: s.labels + more]] = human[order[: s.labels + more]]
    after = estimate(judge, shown)
    assert after.halfwidth is not None
    return covered, found.halfwidth, bias, after.halfwidth <= ask


def measure(settings: Sequence[Setting], repetitions: int, seed: int) -> pl.DataFrame:
    """The table: one row per setting (``RESULT_SCHEMA``)."""
    rows = []
    for k, s in enumerate(settings):
        rng = np.random.default_rng([seed, k])
        found = [_repetition(rng, s) for _ in range(repetitions)]
        kept = [x[3] for x in found if x[3] is not None]
        rows.append({
            "labels": s.labels, "items": s.items, "agreement": s.agreement,
            "judge": "biased" if s.biased else "unbiased", "value": s.value,
            "repetitions": repetitions, "coverage": float(np.mean([x[0] for x in found])),
            "halfwidth": float(np.mean([x[1] for x in found])),
            "judge_bias": float(np.mean([x[2] for x in found])),
            "budgeted": len(kept), "budget_kept": float(np.mean(kept)) if kept else None,
        })  # fmt: skip
    return pl.DataFrame(rows, schema=RESULT_SCHEMA)


def failures(table: pl.DataFrame, z: float = 3.0) -> pl.DataFrame:
    """Rows below either bound by more than ``z`` binomial standard errors (Monte Carlo error)."""
    reps = pl.col("repetitions").cast(pl.Float64)
    cov_slack = z * (BOUND * (1 - BOUND) / reps).sqrt()
    kept = pl.col("budgeted").cast(pl.Float64)
    budget_slack = z * (BUDGET_BOUND * (1 - BUDGET_BOUND) / kept).sqrt()
    return table.filter(
        (pl.col("coverage") < BOUND - cov_slack)
        | ((pl.col("budgeted") > 0) & (pl.col("budget_kept") < BUDGET_BOUND - budget_slack))
    )


def render(table: pl.DataFrame, failed: int) -> str:
    """The table as fixed-width text; ``!`` marks a row below a bound."""
    head = (f"{'labels':>7}{'items':>8}{'agree':>7}{'judge':>10}{'value':>7}{'reps':>6}"
            f"{'coverage':>10}{'halfw':>7}{'bias':>8}{'budgeted':>10}{'kept':>7}")  # fmt: skip
    lines = ["Calibrated estimates (calibrate): coverage of the true human win rate, budget kept",
             head]  # fmt: skip
    for r in table.iter_rows(named=True):
        bad = r["coverage"] < BOUND or (r["budget_kept"] is not None
                                        and r["budget_kept"] < BUDGET_BOUND)  # fmt: skip
        kept = "–" if r["budget_kept"] is None else f"{r['budget_kept']:.3f}"
        lines.append(
            f"{r['labels']:>7}{r['items']:>8}{r['agreement']:>7.2f}{r['judge']:>10}"
            f"{r['value']:>7.2f}{r['repetitions']:>6}{r['coverage']:>10.3f}{r['halfwidth']:>7.3f}"
            f"{r['judge_bias']:>8.3f}{r['budgeted']:>10}{kept:>7}{' !' if bad else ''}"
        )
    lines.append(
        f"coverage bound {BOUND}, budget bound {BUDGET_BOUND}: {failed} of {table.height} rows "
        "below a bound beyond Monte Carlo error"
    )
    return "\n".join(lines)


def simulated_run(
    out: Path, items: int = 2_000, labels: int = 150, agreement: float = 0.75, seed: int = 0
) -> float:
    """A run directory of a judge biased toward model A, with labels; model A's true win rate.

    Blind judgments in both orders (one verdict each, the judge's), models ``model-a`` and
    ``model-b``, 20 questions; ``labels.parquet`` holds one human vote on ``labels`` random items.
    """
    rng = np.random.default_rng(seed)
    s = Setting(labels, items, agreement, biased=True, value=0.5)
    human, judge = population(rng, s)
    verdict = {1.0: "A", 0.5: "Tie", 0.0: "B"}
    rows = []
    for i in range(items):
        for order in ("12", "21"):
            rows.append({
                "run_id": "selftest-calibrate", "judge": "simulated", "protocol": "baseline",
                "condition": BLIND, "item_id": f"item-{i:05d}", "subset": "sim",
                "document_id": f"q{i % 20:02d}", "generator_1": "model-a",
                "generator_2": "model-b", "order": order, "seed": 0,
                "verdict": verdict[float(judge[i])], "target": "none",
            })  # fmt: skip
    frame = (
        pl.DataFrame(rows)
        .with_columns(
            pl.lit(None, dtype=t).alias(c) for c, t in JUDGMENT_SCHEMA.items() if c not in rows[0]
        )
        .select(list(JUDGMENT_SCHEMA))
        .cast(JUDGMENT_SCHEMA)  # type: ignore[arg-type]
    )
    run = RunDir(out)
    out.mkdir(parents=True, exist_ok=True)
    frame.write_parquet(run.judgments)
    run.write_manifest({"run_id": "selftest-calibrate", "created_at": "2026-01-01T00:00:00+00:00",
                        "kind": "selftest-calibrate"})  # fmt: skip
    chosen = rng.permutation(items)[:labels]
    pl.DataFrame(
        [{"item_id": f"item-{i:05d}", "label": verdict[float(human[i])], "score": None,
          "weight": None, "annotator": "simulated"} for i in sorted(chosen)],
        schema=LABEL_SCHEMA,
    ).write_parquet(run.labels)  # fmt: skip
    return float(human.mean())
