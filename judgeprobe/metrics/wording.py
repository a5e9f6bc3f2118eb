"""Agreement across wordings: Fleiss' κ per judge × protocol (docs/metrics.md "Wording").

Each Blind showing judged under K wordings of the prompt is one subject rated by K raters (the
wordings) into A, B or Tie (``items.wording_units``); κ is statsmodels' ``fleiss_kappa`` over the
showings valid under every wording. It is undefined when one category holds every verdict
(chance agreement is then 1: nothing to beat) or when no showing is rated, and is reported as
undefined with the reason, never as NaN. κ is a ratio of quadratic sums, not a share of units, so
it has no score interval here: the wording flip share (registry ``wording_flip``) carries the
document-level interval, and κ is printed beside it as the chance-corrected reading.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from statsmodels.stats.inter_rater import fleiss_kappa

from judgeprobe.metrics.families import prepare
from judgeprobe.metrics.units import DOC, UNIT, wording_units

KAPPA = "wording_kappa"
"""κ's name in the metrics table (condition Blind), beside ``wording_flip``."""
CATEGORIES = {"a": "A", "b": "B", "tie": "Tie"}
"""The wording units' count columns and the verdict each counts."""


@dataclass(frozen=True)
class Kappa:
    """Fleiss' κ of one judge × protocol, or why it is undefined (``value`` None)."""

    value: float | None
    note: str  # "" when defined; else why not, in words


def fleiss(table: np.ndarray) -> Kappa:
    """κ of a subjects × categories count table, every row summing to the same K ≥ 2."""
    if table.shape[0] == 0:
        return Kappa(None, "undefined: no showing has a valid verdict under every wording")
    totals = table.sum(axis=0)
    if (totals == totals.sum()).any():
        only = list(CATEGORIES.values())[int(np.argmax(totals))]
        return Kappa(None, f"undefined: every verdict is {only} (chance agreement is 1)")
    return Kappa(float(fleiss_kappa(table, method="fleiss")), "")


def kappa_of(units: pl.DataFrame) -> Kappa:
    """κ over the rated showings of ``units`` (one judge × protocol's wording units)."""
    rated = units.filter(pl.col("rated") == 1)
    return fleiss(rated.select(*CATEGORIES).to_numpy().astype(np.float64))


AGREEMENT_SCHEMA: dict[str, pl.DataType] = {
    "judge": pl.String(),
    "protocol": pl.String(),
    "wordings": pl.Int64(),  # K: the original and its paraphrases
    "showings": pl.Int64(),  # Blind showings judged under the wordings
    "rated": pl.Int64(),  # valid under every wording: the units of κ and the flip share
    "flipped": pl.Int64(),  # rated, and the K verdicts are not all equal
    "dropped": pl.Int64(),  # an Invalid under some wording: left out, counted
    "items": pl.Int64(),
    "documents": pl.Int64(),
    "kappa": pl.Float64(),
    "kappa_note": pl.String(),
}


def agreement(judgments: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """One row per judge × protocol with wordings (``AGREEMENT_SCHEMA``): counts and κ."""
    units = (
        wording_units(prepare(judgments))
        .with_columns(pl.col("judge", "protocol", DOC, *UNIT).cast(pl.String))
        .collect()
    )
    rows = []
    for (judge, protocol), part in sorted(
        units.partition_by(["judge", "protocol"], as_dict=True).items()
    ):
        kappa, k = kappa_of(part), part["wordings"].cast(pl.Int64).max()
        rated = part.filter(pl.col("rated") == 1)
        rows.append(
            {
                "judge": judge, "protocol": protocol, "wordings": k,
                "showings": part.height, "rated": rated.height,
                "flipped": int(part["flipped"].sum()), "dropped": int(part["dropped"].sum()),
                "items": rated.select(UNIT).n_unique(), "documents": rated[DOC].n_unique(),
                "kappa": kappa.value, "kappa_note": kappa.note,
            }
        )  # fmt: skip
    return pl.DataFrame(rows, schema=AGREEMENT_SCHEMA)
