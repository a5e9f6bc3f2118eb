"""Human-calibrated estimates: the judge's values on every item, people's on a random few.

A model's win rate (pairwise, Ties ½) or mean score (pointwise) as people would judge it, over
the run's items that involve it (docs/metrics.md, "Calibrated estimates and label budgets").
The judge value Ŷ is known on all N items, the human value Y on a uniform random n of them;
prediction-powered inference combines both into an estimate that is unbiased for the human
value whatever the judge's errors: PPI++ with its tuned weight λ (``ppi_py.ppi_mean_ci``, the
estimator and its interval, from the library). Beside it, the judge alone (mean Ŷ over the
items it judged) and people alone (mean Y over the labelled items).

**Why the interval is the library's on an augmented sample.** The PPI++ interval is a normal
interval over the labelled rectifier Y − λŶ. With few labels and a judge that agrees often,
the labelled sample easily holds no disagreement at all (20 labels at agreement 0.95: 36 % of
samples), its rectifier variance is 0, and the interval shrinks to the judge's own noise while
the judge's bias on the unlabelled items is untouched: measured, it covers far below 93 %.
Agresti and Coull's remedy for a share works here too: ``PSEUDO`` pseudo-labelled items of
full disagreement in each direction (human at the top of the scale and judge at the bottom,
and the reverse) join the labelled sample before the library computes λ and the interval, so
no labelled sample is certain of the judge; the point estimate stays the library's on the real
labels. With hundreds of labels the pseudo items move nothing (``selftest.calibration`` and
docs/coverage.md measure both ends).

**Label budget.** The labels for half-width H are the fewest further random labels whose
predicted interval reaches H, predicted with the interval itself: the library's λ and variance
pieces at the larger label count, from the measured variances of Ŷ and of the rectifier, the
latter raised to a one-sided ``BUDGET_CONFIDENCE`` upper confidence bound (for its error now
and the error of the variance measured after the labels, from the rectifier's kurtosis) so
that the recommendation keeps its word in most samples rather than in half of them.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import polars as pl
from pydantic import BaseModel, ConfigDict
from scipy.stats import norm

from judgeprobe import JudgeprobeError
from judgeprobe.core.estimate import Estimate

LEVEL = 0.95
Z = 1.959963984540054  # the normal quantile of a 95% interval (the library's, at alpha 0.05)
PSEUDO = 2
"""Pseudo-labelled items of full disagreement added in each direction (see the module text)."""
METHOD = "PPI++"
"""A calibrated figure's interval: the library's PPI++ interval on the augmented sample."""
BUDGET_CONFIDENCE = 0.9
"""How sure the label budget is of the rectifier's variance (a one-sided upper bound)."""


def ppi() -> Any:
    """The ``ppi_py`` module (optional extra ``calibrate``), or one error line without it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import ppi_py
    except ImportError:
        raise JudgeprobeError(
            "calibrated estimates need ppi-python: pip install 'judgeprobe[calibrate]'"
        ) from None
    return ppi_py


@dataclass(frozen=True, slots=True)
class Calibrated:
    """One model's estimates: the judge's, people's, and the calibrated one with its interval."""

    n_items: int  # items involving the model (N)
    n_judged: int  # of them, items with a valid judge value
    n_labels: int  # of them, items with a human value (n)
    judge_only: float | None  # mean Ŷ over the judged items
    human_only: float | None  # mean Y over the labelled items (weighted when weights are given)
    calibrated: Estimate | None  # the PPI++ estimate with its 95% interval; None: too few labels
    labels_for_halfwidth: int | None  # further labels for the half-width asked; None: unreachable

    @property
    def halfwidth(self) -> float | None:
        """Half the interval's width (None without one)."""
        c = self.calibrated
        return None if c is None or c.lo is None or c.hi is None else (c.hi - c.lo) / 2


def _augmented(
    y: np.ndarray, y_hat: np.ndarray, w: np.ndarray | None, low: float, high: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The labelled sample with ``PSEUDO`` full disagreements each way (mean weight each)."""
    pseudo_y = np.repeat([high, low], PSEUDO)
    pseudo_hat = np.repeat([low, high], PSEUDO)
    weights = None if w is None else np.concatenate([w, np.full(2 * PSEUDO, w.mean())])
    return np.concatenate([y, pseudo_y]), np.concatenate([y_hat, pseudo_hat]), weights


def interval(
    y: np.ndarray,
    y_hat: np.ndarray,
    y_hat_all: np.ndarray,
    bounds: tuple[float, float],
    w: np.ndarray | None = None,
) -> tuple[float, float, float]:
    """PPI++ point estimate and 95% interval; ``y``/``y_hat`` on the labelled items.

    ``bounds``: the value scale (0–1 for a win rate), where the pseudo disagreements sit.
    """
    lib = ppi()
    ya, ha, wa = _augmented(y, y_hat, w, *bounds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo, hi = lib.ppi_mean_ci(ya, ha, y_hat_all, alpha=1 - LEVEL, w=wa)
        point = lib.ppi_mean_pointestimate(y, y_hat, y_hat_all, w=w)
    return float(np.ravel(point)[0]), float(np.ravel(lo)[0]), float(np.ravel(hi)[0])


@dataclass(frozen=True, slots=True)
class Measured:
    """What the label budget is predicted from.

    The labelled sample (pseudo items in it) and the judge values' spread over all N items.
    """

    y: np.ndarray  # Y on the labelled items, pseudo disagreements included
    y_hat: np.ndarray  # Ŷ on the same
    items: int  # N
    var_all: float  # Var(Ŷ) over the N items (the library's imputed term)
    var_pooled: float  # Var(Ŷ) over labelled and all items together (the library's λ)

    @classmethod
    def of(cls, y: np.ndarray, y_hat: np.ndarray, y_hat_all: np.ndarray,
           bounds: tuple[float, float]) -> Measured:  # fmt: skip
        """The pieces of one model's labelled sample and judge values."""
        ya, ha, _ = _augmented(y, y_hat, None, *bounds)
        pooled = float(np.var(np.concatenate([ha, y_hat_all]), ddof=1))
        return cls(ya, ha, len(y_hat_all), float(np.var(y_hat_all)), pooled)


def predicted_halfwidth(
    measured: Measured, labels: int, confidence: float = BUDGET_CONFIDENCE
) -> float:
    """The interval's half-width predicted at ``labels`` labels from the measured variances.

    The interval's own pieces: λ tuned as the library tunes it for ``labels`` labelled of N,
    λ²·Var(Ŷ)/N + Var(Y − λŶ)/(labels + 2·PSEUDO), with the variances and the covariance of
    the labelled sample (pseudo disagreements in it). The rectifier's variance is raised to a
    one-sided ``confidence`` upper bound that covers both its error as measured now and the
    error of the variance the interval will measure then: relative standard deviation
    √((κ − 1)·(1/n_now + 1/n_then)) with κ the rectifier's kurtosis (a judge that rarely
    disagrees has a heavy-tailed rectifier, whose variance a χ² bound, κ = 3, understates).
    """
    ya, ha, big_n = measured.y, measured.y_hat, measured.items
    cov = float(np.mean((ya - ya.mean()) * (ha - ha.mean())))
    n_now, n_then = len(ya), labels + 2 * PSEUDO
    var = measured.var_pooled
    lam = 0.0 if var == 0 else min(max(cov / ((1 + n_then / big_n) * var), 0.0), 1.0)
    rect = ya - lam * ha
    centred = rect - rect.mean()
    m2 = float(np.mean(centred**2))
    kurtosis = float(np.mean(centred**4)) / m2**2 if m2 > 0 else 3.0
    spread = math.sqrt(max(kurtosis - 1, 0.0) * (1 / n_now + 1 / n_then))
    upper = float(np.var(rect, ddof=1)) * (1 + float(norm.ppf(confidence)) * spread)
    return Z * math.sqrt(lam**2 * measured.var_all / big_n + upper / n_then)


def labels_for_halfwidth(measured: Measured, labelled: int, halfwidth: float) -> int | None:
    """Further random labels until the predicted half-width is ≤ ``halfwidth``; None if never.

    Never: not even with every one of the N items labelled (the judge's own noise, which the
    interval always carries, is wider).
    """

    def reaches(labels: int) -> bool:
        return predicted_halfwidth(measured, labels) <= halfwidth

    if reaches(labelled):
        return 0
    if not reaches(measured.items):
        return None
    lo, hi = labelled, measured.items  # reaches(lo) is false, reaches(hi) true
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if reaches(mid) else (mid, hi)
    return hi - labelled


def estimate(
    judge: np.ndarray,
    human: np.ndarray,
    bounds: tuple[float, float] = (0.0, 1.0),
    weight: np.ndarray | None = None,
    halfwidth: float | None = None,
) -> Calibrated:
    """One model's estimates over its N items.

    ``judge``: Ŷ per item, NaN where the judge gave no valid verdict (the PPI prediction is then
    the scale's middle: any fixed prediction keeps the estimate unbiased, the labels correct
    it); ``human``: Y per item, NaN where unlabelled; ``weight``: each labelled item's inverse
    inclusion probability (None: a uniform random sample).
    """
    big_n = len(judge)
    judged = ~np.isnan(judge)
    labelled = ~np.isnan(human)
    n = int(labelled.sum())
    judge_only = float(judge[judged].mean()) if judged.any() else None
    w = None if weight is None else weight[labelled]
    y = human[labelled]
    human_only = None if n == 0 else float(np.average(y, weights=w))
    empty = Calibrated(big_n, int(judged.sum()), n, judge_only, human_only, None, None)
    if n < 2 or big_n < 2:
        return empty
    y_hat_all = np.where(judged, judge, (bounds[0] + bounds[1]) / 2)
    y_hat = y_hat_all[labelled]
    point, lo, hi = interval(y, y_hat, y_hat_all, bounds, w)
    budget = None
    if halfwidth is not None:
        budget = labels_for_halfwidth(Measured.of(y, y_hat, y_hat_all, bounds), n, halfwidth)
    found = Estimate(value=point, lo=lo, hi=hi, method=METHOD)
    return Calibrated(big_n, int(judged.sum()), n, judge_only, human_only, found, budget)


# Per model, from a run's judgments and its human labels ---------------------------------------

WIN_RATE = "win rate"
MEAN_SCORE = "mean score"
VALUE = {"A": 1.0, "Tie": 0.5, "B": 0.0}
"""A preference's value for candidate 1 (ties ½); candidate 2's is 1 minus it."""
HUMAN_SCHEMA: dict[str, pl.DataType] = {
    "item_id": pl.String(),
    "candidate": pl.Int64(),  # 1 or 2
    "value": pl.Float64(),  # Y: the human label's value for that candidate, or its human score
    "weight": pl.Float64(),  # inverse inclusion probability; null: a uniform random sample
}


class CalibratedRow(BaseModel):
    """One judge × protocol × model's calibrated estimate, as ``calibrated.json`` keeps it."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    judge: str
    protocol: str
    model: str
    estimate: str
    """What is estimated: ``WIN_RATE`` or ``MEAN_SCORE``."""
    n_items: int
    """Items involving the model (N)."""
    n_judged: int
    """Of them, items with a valid judge value."""
    n_labels: int
    """Of them, items with a human value (n)."""
    judge_only: float | None
    """Mean Ŷ over the judged items."""
    human_only: float | None
    """Mean Y over the labelled items."""
    calibrated: Estimate | None
    """The PPI++ estimate with its 95% interval (None: too few labels)."""
    halfwidth: float | None
    """Half its interval's width."""
    target_halfwidth: float | None
    """The half-width the label budget is for (``--halfwidth``)."""
    labels_for_halfwidth: int | None
    """Further random labels for it; None: not reachable."""

    @property
    def lo(self) -> float | None:
        """The calibrated interval's lower end (calibrated.csv's ``lo``)."""
        return None if self.calibrated is None else self.calibrated.lo

    @property
    def hi(self) -> float | None:
        """Its upper end (calibrated.csv's ``hi``)."""
        return None if self.calibrated is None else self.calibrated.hi


class CalibratedFile(BaseModel):
    """``calibrated.json``: what ``judgeprobe calibrate`` found, read by the card and report."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    version: Literal[1] = 1
    """The file's version."""
    rows: list[CalibratedRow]
    """One per judge × protocol × model, sorted."""


CALIBRATED_SCHEMA: dict[str, pl.DataType] = {
    "judge": pl.String(),
    "protocol": pl.String(),
    "model": pl.String(),
    "estimate": pl.String(),  # WIN_RATE or MEAN_SCORE
    "n_items": pl.Int64(),
    "n_judged": pl.Int64(),
    "n_labels": pl.Int64(),
    "judge_only": pl.Float64(),
    "human_only": pl.Float64(),
    "calibrated": pl.Float64(),
    "lo": pl.Float64(),
    "hi": pl.Float64(),
    "halfwidth": pl.Float64(),
    "target_halfwidth": pl.Float64(),
    "labels_for_halfwidth": pl.Int64(),
}
"""``calibrated.csv``, the rows' view for people: one row per judge × protocol × model."""


def calibrated_frame(rows: list[CalibratedRow]) -> pl.DataFrame:
    """The rows as calibrated.csv holds them (``CALIBRATED_SCHEMA``)."""
    flat = []
    for r in rows:
        c = r.calibrated or Estimate(value=None)
        flat.append({**r.model_dump(exclude={"calibrated"}), "calibrated": c.value, "lo": c.lo,
                     "hi": c.hi})  # fmt: skip
    return pl.DataFrame(flat, schema=CALIBRATED_SCHEMA)


def model_of(k: int) -> pl.Expr:
    """What wrote candidate ``k``: its generator, else its provenance, else "candidate k"."""
    named = [pl.col(f"{c}_{k}").replace("", None) for c in ("generator", "source")]
    return pl.coalesce(*named, pl.lit(f"candidate {k}")).cast(pl.String)


def judge_values(judgments: pl.DataFrame, estimate_kind: str) -> pl.DataFrame:
    """Ŷ per (judge, protocol, item, candidate) with the candidate's model; null: no valid value.

    A win rate's Ŷ is the mean over the item's valid verdicts of 1, ½, 0 for the candidate; a
    mean score's the mean of the candidate's valid scores.
    """
    j = judgments.lazy()
    have = set(judgments.columns)
    for column in ("generator_1", "generator_2", "source_1", "source_2"):
        if column not in have:
            j = j.with_columns(pl.lit(None, pl.String).alias(column))
    keys = ["judge", "protocol", "item_id"]
    named = {"model_1": model_of(1).first(), "model_2": model_of(2).first()}
    if estimate_kind == WIN_RATE:
        one = pl.col("verdict").replace_strict(VALUE, default=None, return_dtype=pl.Float64)
        per_item = j.group_by(keys).agg(**named, value_1=one.mean())
        per_item = per_item.with_columns(value_2=1 - pl.col("value_1"))
        per_item = per_item.filter(pl.col("model_1") != pl.col("model_2"))  # no model beats itself
    else:
        if "score_1" not in have:
            return pl.DataFrame(schema=_JUDGE_VALUES)
        per_item = j.group_by(keys).agg(
            **named, value_1=pl.col("score_1").mean(), value_2=pl.col("score_2").mean()
        )
    sides = [
        per_item.select(
            *keys,
            pl.lit(k).alias("candidate"),
            pl.col(f"model_{k}").alias("model"),
            pl.col(f"value_{k}").alias("judge_value"),
        )
        for k in (1, 2)
    ]
    out = pl.concat(sides).collect().cast(_JUDGE_VALUES)  # type: ignore[arg-type]
    if estimate_kind == MEAN_SCORE:  # a candidate the pointwise judge never scored is not an item
        scored = out.group_by(["judge", "protocol", "candidate"]).agg(
            pl.col("judge_value").is_not_null().any().alias("any")
        )
        out = out.join(scored.filter("any").drop("any"), on=["judge", "protocol", "candidate"])
    return out.sort(["judge", "protocol", "item_id", "candidate"])


_JUDGE_VALUES: dict[str, pl.DataType] = {
    "judge": pl.String(),
    "protocol": pl.String(),
    "item_id": pl.String(),
    "candidate": pl.Int64(),
    "model": pl.String(),
    "judge_value": pl.Float64(),
}


def score_bounds(judgments: pl.DataFrame, human: pl.DataFrame) -> tuple[float, float]:
    """A mean score's scale: the judge's ``score_min``–``score_max``, else every value seen."""
    found: list[float] = []
    for column in ("score_min", "score_max", "score_1", "score_2"):
        if column in judgments.columns:
            found += judgments[column].drop_nulls().cast(pl.Float64).to_list()
            if column == "score_max" and found:
                break
    found += human["value"].drop_nulls().to_list()
    if not found:
        return 0.0, 1.0
    low, high = min(found), max(found)
    return (low, high) if high > low else (low, low + 1.0)


def calibrated_rows(
    judgments: pl.DataFrame,
    human: pl.DataFrame,
    estimate_kind: str,
    halfwidth: float | None = None,
) -> list[CalibratedRow]:
    """Every judge × protocol × model's estimates, sorted (``calibrated.json``'s rows).

    ``judgments``: the rows of the condition the judge is calibrated under (Blind);
    ``human``: ``HUMAN_SCHEMA``, one row per labelled (item, candidate).
    """
    values = judge_values(judgments, estimate_kind)
    bounds = (0.0, 1.0) if estimate_kind == WIN_RATE else score_bounds(judgments, human)
    joined = values.join(human, on=["item_id", "candidate"], how="left")
    rows: list[CalibratedRow] = []
    for (judge, protocol, model), part in joined.partition_by(
        ["judge", "protocol", "model"], as_dict=True, maintain_order=True
    ).items():
        judge_y = part["judge_value"].fill_null(math.nan).to_numpy().astype(float)
        human_y = part["value"].fill_null(math.nan).to_numpy().astype(float)
        given = part["weight"].filter(part["value"].is_not_null())
        weight = None  # a uniform random sample, unless every labelled item has its weight
        if given.len() and given.null_count() == 0:
            weight = part["weight"].fill_null(math.nan).to_numpy().astype(float)
        found = estimate(judge_y, human_y, bounds, weight, halfwidth)
        rows.append(CalibratedRow(
            judge=str(judge), protocol=str(protocol), model=str(model), estimate=estimate_kind,
            n_items=found.n_items, n_judged=found.n_judged, n_labels=found.n_labels,
            judge_only=found.judge_only, human_only=found.human_only,
            calibrated=found.calibrated, halfwidth=found.halfwidth, target_halfwidth=halfwidth,
            labels_for_halfwidth=found.labels_for_halfwidth,
        ))  # fmt: skip
    return sorted(rows, key=lambda r: (r.judge, r.protocol, r.model))


MULTIPLIER_SCHEMA: dict[str, pl.DataType] = {
    "judge": pl.String(),
    "protocol": pl.String(),
    "model": pl.String(),
    "n_labels": pl.Int64(),
    "halfwidth": pl.Float64(),
    "equivalent_labels": pl.Float64(),
    "multiplier": pl.Float64(),
}
"""One row per judge × protocol × model: what a judge's verdicts are worth in human labels."""


def equivalent_labels(human_sd: float, halfwidth: float | None) -> float | None:
    """n_eq = (z · s_Y / H)²: the labels alone whose normal interval has half-width H.

    None without an interval, or when the labels do not vary (their own interval is then no
    interval at all).
    """
    if halfwidth is None or halfwidth <= 0 or not human_sd > 0:
        return None
    return float((Z * human_sd / halfwidth) ** 2)


def label_multipliers(
    judgments: pl.DataFrame, human: pl.DataFrame, estimate_kind: str = WIN_RATE
) -> pl.DataFrame:
    """Each judge's label multiplier n_eq / n for the calibrated estimate (docs/metrics.md).

    ``judgments`` and ``human`` as ``calibrated_rows`` takes them; s_Y is the standard deviation
    of the n labelled values of the model's items.
    """
    keys = ["judge", "protocol", "model"]
    spread = (
        judge_values(judgments, estimate_kind)
        .join(human, on=["item_id", "candidate"], how="inner")
        .filter(pl.col("value").is_not_null())
        .group_by(keys)
        .agg(sd=pl.col("value").std(ddof=1))
    )
    sds = {tuple(r[:3]): r[3] for r in spread.iter_rows()}
    rows = []
    for r in calibrated_rows(judgments, human, estimate_kind):
        n_eq = equivalent_labels(sds.get((r.judge, r.protocol, r.model)) or 0.0, r.halfwidth)
        n = r.n_labels
        rows.append({"judge": r.judge, "protocol": r.protocol, "model": r.model, "n_labels": n,
                     "halfwidth": r.halfwidth, "equivalent_labels": n_eq,
                     "multiplier": None if n_eq is None or not n else n_eq / n})  # fmt: skip
    return pl.DataFrame(rows, schema=MULTIPLIER_SCHEMA)
