"""Gold: does the judge pick the gold response, and do the content-blind baselines?

docs/metrics.md, "Gold". On the valid verdicts of a cell's judgments whose item has gold 1 or 2
(``gold`` A or B; a degraded pair has none), per unit (judge, protocol, condition, document,
item, order, seed):

- ``correct`` verdicts equal to gold, ``other`` verdicts for the other response, ``gold_judged``
  every valid verdict (ties kept in n, never correct):
  ACC = Σcorrect / Σgold_judged, SENS_gold = (Σcorrect − Σother) / Σgold_judged;
- the content-blind baselines on the same judgments, lengths in characters as shown:
  ACC_longer = (n(the longer is gold) + ½ n(equal length)) / n, ACC_shorter likewise. Counted
  in half points (``longer2`` = 2 for a hit, 1 for equal length, over ``judged2`` = 2 n), so
  each is one share of sums and gets the registry's document-level interval;
- ACC_vs_longer = ACC − ACC_longer and ACC_vs_shorter likewise, on the same judgments (a
  difference of shares, MOVER over documents): whether the judge beats the length;
- on items whose gold is a tie, which leave ACC: ``tie_said`` Tie verdicts of ``tie_judged``
  valid ones, EDR_gold_tie.
"""

from __future__ import annotations

import polars as pl

from judgeprobe.core.records import TIE
from judgeprobe.metrics.uncertainty import contrast, ratio
from judgeprobe.metrics.units import KEYS, VALID, VERDICT

COLUMNS = ("correct", "other", "gold_judged", "longer2", "shorter2", "judged2")
TIE_COLUMNS = ("tie_said", "tie_judged")
ACC = ratio(0, 1)  # over (correct, gold_judged)
SENS_GOLD = contrast(0, 1, 2)  # over (correct, other, gold_judged)

GOLD = pl.col("gold").fill_null("")
PICKED = GOLD.is_in(["A", "B"])
"""A judgment whose item has a gold pick (1 or 2): the accuracy row's judgments."""


def _half_points(first_wins: pl.Expr) -> pl.Expr:
    """2 where the baseline's pick is gold, 1 where both lengths are equal, else 0."""
    one, two = pl.col("length_1"), pl.col("length_2")
    pick_a = pl.when(one == two).then(None).otherwise(first_wins)
    hit = (pick_a & (GOLD == "A")) | (~pick_a & (GOLD == "B"))
    return pl.when(one == two).then(1).when(hit).then(2).otherwise(0)


def gold_units(j: pl.LazyFrame) -> pl.LazyFrame:
    """Per unit with a gold pick (1 or 2): the counts of ``COLUMNS``."""
    one, two = pl.col("length_1"), pl.col("length_2")
    picked = VALID
    other = pl.when(GOLD == "A").then(pl.lit("B")).otherwise(pl.lit("A"))
    counts = {
        "correct": (picked & (VERDICT == GOLD)).sum(),
        "other": (picked & (other == VERDICT)).sum(),
        "gold_judged": picked.sum(),
        "longer2": pl.when(picked).then(_half_points(one > two)).otherwise(0).sum(),
        "shorter2": pl.when(picked).then(_half_points(one < two)).otherwise(0).sum(),
        "judged2": picked.sum() * 2,
    }
    return (
        j.filter(PICKED)
        .group_by(KEYS)
        .agg(**{name: count.cast(pl.Int64) for name, count in counts.items()})
    )


def gold_tie_units(j: pl.LazyFrame) -> pl.LazyFrame:
    """Per unit whose gold is a tie (it leaves ACC): Tie verdicts and valid ones."""
    return (
        j.filter(GOLD == TIE)
        .group_by(KEYS)
        .agg(
            tie_said=(VALID & (VERDICT == TIE)).sum().cast(pl.Int64),
            tie_judged=VALID.sum().cast(pl.Int64),
        )
    )
