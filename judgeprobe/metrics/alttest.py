"""The alternative annotator test: can the judge replace the annotators?

Calderon, Reichart and Dror, ACL 2025; docs/metrics.md, "Alternative annotator test", is the
definition. Each annotator j is left out in turn; on every counted item j labelled, the judge J and
j are each aligned with the other annotators' labels of that item (the share equal for categories,
−RMSE for scores), and each earns a point when at least as aligned as the other. A one-sided paired
t-test per annotator asks whether j's lead, d = W_j − W_J, is below the margin ε the judge's
cheapness buys; the tested annotators' p-values are corrected by Benjamini–Yekutieli. The winning
rate ω is the share of annotators beaten; the judge replaces them at ε when ω ≥ ½. The advantage
probability ρ, the mean of W_J, ranks judges whatever ε is.

The points depend on the labels only and the test on ε only, so ``wins`` computes the points once
and ``alt_test`` decides at each ε from them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl
from scipy.stats import false_discovery_control, ttest_1samp

from judgeprobe import JudgeprobeError

Metric = Literal["accuracy", "neg_rmse"]
ACCURACY: Metric = "accuracy"
NEG_RMSE: Metric = "neg_rmse"
MIN_ITEMS = 30
"""An annotator with fewer counted items is not tested (the t-test's normal approximation)."""
FDR = 0.05
"""Benjamini–Yekutieli's level across the tested annotators."""
REPLACES_AT = 0.5
"""The winning rate at which the judge can replace the annotators."""
EPSILONS = tuple(round(0.05 * k, 2) for k in range(7))
"""The margins every table shows: 0 to 0.3 in steps of 0.05."""
DEFAULT_EPSILON = 0.2
SUGGESTED = {"experts": 0.2, "skilled annotators": 0.15, "crowd workers": 0.1}
"""The paper's rule of thumb for ε by who the annotators are."""

ALTTEST_SCHEMA: dict[str, pl.DataType] = {
    "judge": pl.String(),
    "protocol": pl.String(),
    "epsilon": pl.Float64(),
    "winning_rate": pl.Float64(),
    "advantage_probability": pl.Float64(),
    "replaces": pl.Boolean(),
    "chosen": pl.Boolean(),  # the ε the command was given: the card's verdict reads this row
    "annotators": pl.Int64(),  # tested
    "untested": pl.Int64(),  # under MIN_ITEMS counted items
    "items": pl.Int64(),  # counted items
}
"""``alttest.csv``: one row per judge × protocol × ε."""
ANNOTATORS_SCHEMA: dict[str, pl.DataType] = {
    "judge": pl.String(),
    "protocol": pl.String(),
    "epsilon": pl.Float64(),
    "annotator": pl.String(),
    "items": pl.Int64(),
    "tested": pl.Boolean(),
    "judge_wins": pl.Float64(),  # mean W_J
    "annotator_wins": pl.Float64(),  # mean W_j
    "p": pl.Float64(),
    "rejected": pl.Boolean(),
}
"""``alttest_annotators.csv``: one row per judge × protocol × ε × annotator."""


@dataclass(frozen=True)
class Wins:
    """One annotator left out: the judge's and the annotator's points on its counted items."""

    annotator: str
    judge: np.ndarray  # W_J(i), 0 or 1
    human: np.ndarray  # W_j(i), 0 or 1

    @property
    def items(self) -> int:
        """Counted items the annotator labelled."""
        return len(self.judge)


@dataclass(frozen=True)
class Points:
    """Every annotator's points, and the counted items (two or more annotators and the judge)."""

    annotators: tuple[Wins, ...]
    items: int


@dataclass(frozen=True)
class AnnotatorTest:
    """One annotator's test at one ε (``p`` None: not tested, or scipy's NaN)."""

    annotator: str
    items: int
    tested: bool
    judge_wins: float | None
    annotator_wins: float | None
    p: float | None
    rejected: bool


@dataclass(frozen=True)
class AltTest:
    """The test at one ε: ω, ρ, the verdict and each annotator's part."""

    epsilon: float
    winning_rate: float
    advantage_probability: float
    annotators: tuple[AnnotatorTest, ...]
    items: int  # counted items

    @property
    def replaces(self) -> bool:
        """The judge can replace the annotators at this ε: ω ≥ ½."""
        return self.winning_rate >= REPLACES_AT

    @property
    def tested(self) -> int:
        """Annotators tested (at least ``MIN_ITEMS`` counted items)."""
        return sum(a.tested for a in self.annotators)


def _check(frame: pl.DataFrame, what: str, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise JudgeprobeError(f"{what}: missing column(s) {', '.join(missing)}")


def wins(humans: pl.DataFrame, judge: pl.DataFrame, metric: Metric) -> Points:
    """Each annotator's points against the judge, over the counted items it labelled.

    ``humans``: ``item_id``, ``annotator``, ``label`` (one row per annotator and item);
    ``judge``: ``item_id``, ``label``. Labels are strings (compared for equality) under
    accuracy, numbers under neg_rmse; a null label is no label. An item counts when two or
    more annotators and the judge labelled it.
    """
    _check(humans, "human labels", ("item_id", "annotator", "label"))
    _check(judge, "judge labels", ("item_id", "label"))
    h = humans.select("item_id", "annotator", "label").drop_nulls()
    x = judge.select("item_id", pl.col("label").alias("x")).drop_nulls().unique("item_id")
    if h.select(pl.struct("item_id", "annotator").is_duplicated().any()).item():
        raise JudgeprobeError("human labels: an annotator labels an item more than once")
    people = sorted(h["annotator"].unique().to_list())
    if len(people) < 2:
        raise JudgeprobeError(
            f"the alt-test needs two or more annotators (three or more recommended); found "
            f"{len(people)}"
        )
    counted = h.group_by("item_id").agg(n=pl.len()).filter(pl.col("n") >= 2).join(x, "item_id")
    h = h.join(counted.select("item_id"), on="item_id")
    pairs = (
        h.join(h.rename({"annotator": "other", "label": "y"}), on="item_id")
        .filter(pl.col("annotator") != pl.col("other"))
        .join(x, on="item_id")
    )
    if metric == ACCURACY:  # the share of the reference labels equal: higher is closer
        near_h, near_x = (pl.col("label") == pl.col("y")), (pl.col("x") == pl.col("y"))
        agg = (near_h.mean().alias("a_h"), near_x.mean().alias("a_x"))
    else:  # −RMSE against the same reference set: compare the squared errors, lower is closer
        sq_h = (pl.col("label") - pl.col("y")) ** 2
        sq_x = (pl.col("x") - pl.col("y")) ** 2
        agg = ((-sq_h.sum()).alias("a_h"), (-sq_x.sum()).alias("a_x"))
    per = (
        pairs.group_by("annotator", "item_id")
        .agg(*agg)
        .with_columns(
            w_j=(pl.col("a_x") >= pl.col("a_h")).cast(pl.Int8),
            w_h=(pl.col("a_h") >= pl.col("a_x")).cast(pl.Int8),
        )
        .sort("annotator", "item_id")
    )
    parts = per.partition_by("annotator", as_dict=True)
    empty = np.zeros(0, dtype=np.int8)
    out = []
    for who in people:
        part = parts.get((who,))
        got = (empty, empty) if part is None else (part["w_j"].to_numpy(), part["w_h"].to_numpy())
        out.append(Wins(who, *got))
    return Points(tuple(out), counted.height)


def one_sided_p(d: np.ndarray, epsilon: float) -> float | None:
    """The p-value of H₀: mean(d) ≥ ε against mean(d) < ε, scipy's one-sample t-test (None: NaN)."""
    with warnings.catch_warnings():  # constant differences: scipy's own decision, said in docs
        warnings.simplefilter("ignore", RuntimeWarning)
        p = float(ttest_1samp(d, epsilon, alternative="less").pvalue)
    return None if np.isnan(p) else p


def by_rejected(ps: Sequence[float | None], q: float = FDR) -> list[bool]:
    """Benjamini–Yekutieli at ``q`` (scipy's adjusted p-values); a None p is never rejected.

    A None counts in the family as a p of 1 does: it cannot be rejected and it raises the
    others' bar as one more test.
    """
    if not ps:
        return []
    full = np.array([1.0 if p is None else p for p in ps])
    adjusted = false_discovery_control(full, method="by")
    return [p is not None and bool(a <= q) for p, a in zip(ps, adjusted, strict=True)]


def alt_test(
    points: Points, epsilon: float, *, q: float = FDR, min_items: int = MIN_ITEMS
) -> AltTest:
    """The test at ``epsilon`` from the points ``wins`` gave."""
    found = points.annotators
    tested = [w for w in found if w.items >= min_items]
    if not tested:
        most = max((w.items for w in found), default=0)
        raise JudgeprobeError(
            f"no annotator has {min_items} counted items (items also labelled by another "
            f"annotator and by the judge); the most is {most}: nothing to test"
        )
    ps = [one_sided_p(w.human.astype(float) - w.judge, epsilon) for w in tested]
    rejected = dict(zip((w.annotator for w in tested), by_rejected(ps, q), strict=True))
    p_of = dict(zip((w.annotator for w in tested), ps, strict=True))
    parts = tuple(
        AnnotatorTest(
            annotator=w.annotator,
            items=w.items,
            tested=w.annotator in rejected,
            judge_wins=float(w.judge.mean()) if w.items else None,
            annotator_wins=float(w.human.mean()) if w.items else None,
            p=p_of.get(w.annotator),
            rejected=rejected.get(w.annotator, False),
        )
        for w in found
    )
    omega = sum(rejected.values()) / len(tested)
    rho = float(np.mean([w.judge.mean() for w in tested]))
    return AltTest(epsilon, omega, rho, parts, points.items)


def alt_tests(
    points: Points, epsilons: Sequence[float], *, q: float = FDR, min_items: int = MIN_ITEMS
) -> list[AltTest]:
    """The test at each of ``epsilons``."""
    return [alt_test(points, e, q=q, min_items=min_items) for e in epsilons]
