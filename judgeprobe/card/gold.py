"""The card's accuracy rows: gold as a sensitivity control, beside the degraded copies.

One row per judge × protocol whose Blind judgments have gold picks (``metrics.gold``). Its
effect is SENS_gold = (gold − other chosen) / judged, ties in n, the sensitivity row's form,
with its document-level interval and the exact sign test over documents of gold against the
other response. ACC and the content-blind baselines ACC_longer and ACC_shorter sit beside it
(``AccuracyRow.accuracy``, ``accuracy_longer``, ``accuracy_shorter``).

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

from judgeprobe.card.kinds.reading import AccuracyRow
from judgeprobe.card.pairs import direction_test
from judgeprobe.conditions import BLIND
from judgeprobe.metrics.gold import gold_units
from judgeprobe.metrics.lookup import MetricsTable
from judgeprobe.metrics.units import DOC, with_optional

ACCURACY_ROW = "accuracy"
"""Each accuracy row's name."""
MARGINS = ("ACC_vs_longer", "ACC_vs_shorter")
"""ACC beyond each length baseline (``metrics.gold``): both must lie above 0 for SENSITIVE."""


def accuracy_rows(judgments: pl.DataFrame, table: MetricsTable) -> list[AccuracyRow]:
    """One untested-yet row per judge × protocol with gold on Blind (no q, no verdict yet)."""
    j = with_optional(judgments.lazy()).with_columns(pl.col(DOC).cast(pl.String))
    units = (
        gold_units(j.filter(pl.col("condition") == BLIND))
        .filter(pl.col("gold_judged") > 0)
        .with_columns(pl.col("judge", "protocol").cast(pl.String))
        .collect()
    )
    rows: list[AccuracyRow] = []
    for (judge, protocol), part in sorted(
        units.partition_by(["judge", "protocol"], as_dict=True).items()
    ):
        cell = (str(judge), str(protocol), BLIND)
        up, down, p = direction_test(part, pl.col("correct") - pl.col("other"))
        lows = [table.get(cell, metric).lo for metric in MARGINS]
        rows.append(
            AccuracyRow(
                judge=cell[0],
                protocol=cell[1],
                row=ACCURACY_ROW,
                n=int(part["gold_judged"].sum()),
                documents=part[DOC].n_unique(),
                effect_name="SENS_gold (gold − other)",
                effect=table.get(cell, "SENS_gold").found,
                up=up,
                down=down,
                p=p,
                accuracy=table.get(cell, "ACC").found,
                accuracy_longer=table.get(cell, "ACC_longer").found,
                accuracy_shorter=table.get(cell, "ACC_shorter").found,
                beats_length=all(lo is not None and lo > 0 for lo in lows),
            )
        )
    return rows
