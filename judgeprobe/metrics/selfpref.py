"""Self-preference (2 × 3): does the judge prefer its own text, and does a label move it?

On the self-preference items (``judgeprobe.selfpref.from_sets``: the judge's text is candidate 1,
subsets ``self_vs_other`` and ``self_style``) and three label arms (Blind; ``SelfOwn``:
"Written by you" on the judge's text; ``SelfOther``: on the other model's), per judge ×
protocol × subset, two questions reported apart:

- **unlabelled**: the judge's text's win rate under Blind (a Tie counts half; 0.5 = no
  preference). On ``self_style`` (identical content, only the wording is the judge's) a rate
  above 0.5 is a preference for its own style, which quality cannot explain; the rate on
  ``self_vs_other`` minus it is what the content added.
- **label**: the change in that win rate when the label is shown, paired with Blind on the same
  item, order and seed (``SelfOwn`` − Blind; ``SelfOther`` − Blind, where a drop means the judge
  followed a false "Written by you" to the other text).

Intervals: 95% over documents, score-type (``metrics.uncertainty.interval``; no resampling).
"""

from __future__ import annotations

import polars as pl

from judgeprobe.conditions import BLIND
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES, ratio, unit_interval
from judgeprobe.metrics.units import DOC, PAIR, with_optional

SUBSETS = {
    "self_vs_other": "own text vs the other model's",
    "self_style": "same content, the judge's wording vs the other model's",
}
LABELS = {"SelfOwn": "label on its own text", "SelfOther": "label on the other's text"}
UNLABELLED = "unlabelled: own text's win rate"
SCHEMA = {
    "judge": pl.String,
    "protocol": pl.String,
    "subset": pl.String,
    "measure": pl.String,
    "n": pl.Int64,
    "documents": pl.Int64,
    "value": pl.Float64,
    "lo": pl.Float64,
    "hi": pl.Float64,
}
_WON = {"A": 1.0, "B": 0.0, "Tie": 0.5}  # the judge's text is candidate 1


def self_preference(
    judgments: pl.DataFrame, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> pl.DataFrame:
    """One row per judge × protocol × subset × measure (unlabelled rate, each label's effect)."""
    j = with_optional(judgments.lazy()).collect().with_columns(pl.col(DOC).cast(pl.String))
    j = j.filter(pl.col("subset").is_in(list(SUBSETS)) & pl.col("verdict").is_in(list(_WON)))
    j = j.with_columns(
        won=pl.col("verdict").replace_strict(_WON, return_dtype=pl.Float64), one=pl.lit(1.0)
    )
    rows: list[dict[str, object]] = []
    for key, part in j.partition_by(["judge", "protocol", "subset"], as_dict=True).items():
        cell = dict(zip(("judge", "protocol", "subset"), map(str, key), strict=True))
        blind = part.filter(pl.col("condition") == BLIND)
        rows.append(cell | {"measure": UNLABELLED} | _rate(blind, "won", resamples, seed))
        twins = blind.select(*PAIR, won_B="won")
        for condition, measure in LABELS.items():
            probe = part.filter(pl.col("condition") == condition).join(twins, on=PAIR)
            units = probe.with_columns(shift=pl.col("won") - pl.col("won_B"))
            rows.append(cell | {"measure": measure} | _rate(units, "shift", resamples, seed))
    order = {**{s: i for i, s in enumerate(SUBSETS)}}
    measures = {m: i for i, m in enumerate([UNLABELLED, *LABELS.values()])}
    out = pl.DataFrame(rows, schema=SCHEMA) if rows else pl.DataFrame(schema=SCHEMA)
    return out.sort(
        "judge", "protocol", pl.col("subset").replace_strict(order, return_dtype=pl.Int64),
        pl.col("measure").replace_strict(measures, return_dtype=pl.Int64),
    )  # fmt: skip


def _rate(units: pl.DataFrame, column: str, resamples: int, seed: int) -> dict[str, object]:
    """The mean of ``column`` with its document-level interval; None without units."""
    if units.is_empty():
        return {"n": 0, "documents": 0, "value": None, "lo": None, "hi": None}
    value = float(units[column].mean())  # type: ignore[arg-type]
    lo, hi = unit_interval(units, [column, "one"], ratio(0, 1), resamples, seed, by=DOC)
    return {"n": units.height, "documents": units[DOC].n_unique(), "value": value,
            "lo": lo, "hi": hi}  # fmt: skip
