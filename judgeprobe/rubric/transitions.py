"""Transitions of counterfactual pairs: one verdict before, one after the perturbation.

Over pairs where both verdicts are valid (docs/metrics.md, "Human check and rubric probe"):

- **desired flip**: the verdict reverses the expected way. When the pair knows what the
  original should get (``expected``, used for response reversal), only the flip away from it
  is desired and the other flip is a **wrong-direction flip**; otherwise (criterion negation)
  either flip is desired, and the two directions are shown apart (the paper's "125 + 43").
- **sticky satisfy** / **sticky violate**: the same verdict both times.

Percentages come with a 95% interval over items (an item's seeds count together), the
metrics' score-type interval (``metrics.uncertainty.unit_interval``; no resampling).
"""

from __future__ import annotations

import polars as pl

from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES, ratio, unit_interval
from judgeprobe.report.rubric import LABELS

TRANSITIONS = ("desired_flip", "wrong_direction_flip", "sticky_satisfy", "sticky_violate")
VALID = ("satisfied", "violated")

#: The columns a pairs frame must have (``expected`` may be null).
PAIR_COLUMNS = ["judge", "perturbation", "item_id", "seed", "before", "after", "expected"]


def transition_expr() -> pl.Expr:
    """Each pair's transition; null when either verdict is not valid."""
    before, after, expected = pl.col("before"), pl.col("after"), pl.col("expected")
    valid = before.is_in(VALID) & after.is_in(VALID)
    return (
        pl.when(~valid)
        .then(None)
        .when(before == after)
        .then(
            pl.when(before == "satisfied")
            .then(pl.lit("sticky_satisfy"))
            .otherwise(pl.lit("sticky_violate"))
        )
        .when(expected.is_null() | (before == expected))
        .then(pl.lit("desired_flip"))
        .otherwise(pl.lit("wrong_direction_flip"))
        .alias("transition")
    )


def with_transitions(pairs: pl.DataFrame) -> pl.DataFrame:
    """Label each (original, rewrite) verdict pair with its transition."""
    return pairs.with_columns(transition_expr())


def _detail(group: pl.DataFrame, transition: str) -> str:
    if not transition.endswith("flip"):
        return ""
    flips = group.filter(pl.col("transition") == transition)
    s2v = int((flips["before"] == "satisfied").sum())
    return f"{s2v} S→V + {flips.height - s2v} V→S"


def transition_table(
    pairs: pl.DataFrame, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> pl.DataFrame:
    """One row per (judge, perturbation, transition): count, percent of valid pairs, interval.

    The wrong-direction row appears only where some pair has a known expected verdict.
    """
    scored = with_transitions(pairs.select(PAIR_COLUMNS))
    rows: list[dict[str, object]] = []
    for (judge, perturbation), group in scored.group_by(
        ["judge", "perturbation"], maintain_order=True
    ):
        valid = group.filter(pl.col("transition").is_not_null())
        directed = valid["expected"].is_not_null().any()
        per_item = valid.group_by("item_id").agg(
            *[(pl.col("transition") == o).sum().alias(o) for o in TRANSITIONS], n=pl.len()
        )
        for k, transition in enumerate(TRANSITIONS):
            if transition == "wrong_direction_flip" and not directed:
                continue
            count = int(per_item[transition].sum()) if valid.height else 0
            lo, hi = unit_interval(
                per_item, [*TRANSITIONS, "n"], ratio(k, len(TRANSITIONS)), resamples, seed
            )
            rows.append(
                {
                    "judge": judge,
                    "perturbation": perturbation,
                    "transition": LABELS[transition],
                    "count": count,
                    "percent": 100 * count / valid.height if valid.height else None,
                    "lo": 100 * lo if lo == lo else None,
                    "hi": 100 * hi if hi == hi else None,
                    "detail": _detail(valid, transition),
                    "valid_pairs": valid.height,
                    "pairs": group.height,
                }
            )
    return pl.DataFrame(rows) if rows else pl.DataFrame()
