"""The card's accuracy rows: gold as a sensitivity control, beside the degraded copies.

One row per judge × protocol whose Blind judgments have gold picks (``metrics.gold``). Its
effect is SENS_gold = (gold − other chosen) / judged, ties in n, the sensitivity row's form,
with its document-level interval and the exact sign test over documents of gold against the
other response. ACC and the content-blind baselines sit beside it (in the LDS, TS and OLS
columns, as the pressure rows keep their moves there): ACC_longer, ACC_shorter.

Only Blind counts: a judge shown labels could copy them, and a cue's text changes are what the
cue rows test. The row is SENSITIVE (the judge is shown to read) when the sign test holds
after Benjamini–Hochberg with the card's other tests, the interval's lower end reaches
``sensitivity_effect``, and ACC beats both length baselines (the lower ends of
ACC_vs_longer and ACC_vs_shorter, ACC − baseline with its MOVER interval over documents, above
0); INSENSITIVE otherwise. So a judge that always picks one side, always says Tie, or reads
the length and not the content does not earn it: the first two have SENS_gold ≈ 0, the last
has ACC = its baseline. ``sensitivity.gate`` keeps CLEAR from a judge × protocol with any
reading row not SENSITIVE.
"""

from __future__ import annotations

import polars as pl

from judgeprobe.card.pairs import direction_test
from judgeprobe.metrics.gold import gold_units
from judgeprobe.metrics.units import BLIND, DOC, with_optional

ROW = "accuracy"
MARGINS = ("ACC_vs_longer", "ACC_vs_shorter")
"""ACC beyond each length baseline (``metrics.gold``): both must lie above 0 for SENSITIVE."""


def _tidy(tidy: pl.DataFrame, judge: str, protocol: str, metric: str) -> tuple[object, ...]:
    level = pl.col("versus").is_null() if "versus" in tidy.columns else pl.lit(True)
    found = tidy.filter(
        level & (pl.col("judge") == judge) & (pl.col("protocol") == protocol)
        & (pl.col("condition") == BLIND) & (pl.col("metric") == metric)
    )  # fmt: skip
    if found.is_empty():
        return None, None, None
    r = found.row(0, named=True)
    return r["value"], r["lo"], r["hi"]


def accuracy_rows(judgments: pl.DataFrame, tidy: pl.DataFrame) -> list[dict[str, object]]:
    """One untested-yet row per judge × protocol with gold on Blind (no q, no verdict yet)."""
    j = with_optional(judgments.lazy()).with_columns(pl.col(DOC).cast(pl.String))
    units = (
        gold_units(j.filter(pl.col("condition") == BLIND))
        .filter(pl.col("gold_judged") > 0)
        .with_columns(pl.col("judge", "protocol").cast(pl.String))
        .collect()
    )
    rows: list[dict[str, object]] = []
    for (judge, protocol), part in sorted(
        units.partition_by(["judge", "protocol"], as_dict=True).items()
    ):
        cell = (str(judge), str(protocol))
        up, down, p = direction_test(part, pl.col("correct") - pl.col("other"))
        row: dict[str, object] = {
            "judge": cell[0], "protocol": cell[1], "row": ROW, "kind": ROW,
            "n": int(part["gold_judged"].sum()), "documents": part[DOC].n_unique(),
            "effect_name": "SENS_gold (gold − other)", "up": up, "down": down, "p": p,
        }  # fmt: skip
        found = _tidy(tidy, *cell, "SENS_gold")
        row |= dict(zip(("effect", "effect_lo", "effect_hi"), found, strict=True))
        for column, metric in (("LDS", "ACC"), ("TS", "ACC_longer"), ("OLS", "ACC_shorter")):
            got = _tidy(tidy, *cell, metric)
            row |= dict(zip((column, f"{column}_lo", f"{column}_hi"), got, strict=True))
        lows = [_tidy(tidy, *cell, metric)[1] for metric in MARGINS]
        rows.append(row | {"_beats_length": all(isinstance(lo, float) and lo > 0 for lo in lows)})
    return rows
