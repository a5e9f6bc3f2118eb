"""The card's sensitivity rows, and the gate that keeps CLEAR from a judge that does not read.

A cue row is CLEAR when the run could have seen a cue effect and saw none. A judge that
ignores the texts never moves with a label either, so on cue rows alone blindness reads as
invariance. The sensitivity row (one per judge × protocol of a run with a sensitivity
condition, ``conditions`` ``degrade``) measures whether the judge reads at all: SENS pooled
over every kind of degradation (``metrics.sensitivity``), with its document-level interval
and the exact sign test over documents of intact against degraded (McNemar on discordant
documents). It is SENSITIVE when the test is significant after Benjamini–Hochberg with the
card's other tests (q ≤ ``fdr``) and the interval's lower end reaches
``sensitivity_effect``; INSENSITIVE otherwise.

Under thresholds of version 2 and later, every row of a judge × protocol without a SENSITIVE
row (its row INSENSITIVE, or no sensitivity condition in the run) that would be CLEAR (a cue
or position row) is INSENSITIVE instead: invariance to a cue means something only for a
judge that responds to evidence (docs/metrics.md), and a judge that always says Tie shows no
position effect for the same reason, and says the same under every wording of its prompt (a
STABLE wording row is gated like a CLEAR). BIASED, UNSTABLE and UNDERPOWERED stand. Version-1
thresholds have no such gate.
"""

from __future__ import annotations

from typing import TypeVar

import polars as pl

from judgeprobe.card.kinds.base import RowBase
from judgeprobe.card.kinds.reading import SensitivityRow
from judgeprobe.card.pairs import direction_test
from judgeprobe.metrics.lookup import MetricsTable
from judgeprobe.metrics.sensitivity import POOLED, sensitivity_units
from judgeprobe.metrics.units import DOC, with_optional

SENSITIVITY_ROW = "sensitivity"
"""Each sensitivity row's name."""
SENSITIVE, INSENSITIVE = "SENSITIVE", "INSENSITIVE"


def sensitivity_rows(judgments: pl.DataFrame, table: MetricsTable) -> list[SensitivityRow]:
    """One untested-yet row per judge × protocol with sensitivity judgments (no q, no verdict).

    ``effect`` is the pooled SENS with its interval from the metrics table; ``up`` and ``down``
    the documents whose verdicts favour the intact text or the copy, and ``p`` their exact test.
    """
    j = with_optional(judgments.lazy()).with_columns(pl.col(DOC).cast(pl.String))
    units = (
        sensitivity_units(j.with_columns(pl.col("condition").cast(pl.Categorical)))
        .filter(pl.col("condition") == POOLED)
        .with_columns(pl.col("judge", "protocol").cast(pl.String))
        .collect()
    )
    rows: list[SensitivityRow] = []
    for (judge, protocol), part in sorted(
        units.partition_by(["judge", "protocol"], as_dict=True).items()
    ):
        up, down, p = direction_test(part, pl.col("intact") - pl.col("worse"))
        pooled = table.get((str(judge), str(protocol), POOLED), "SENS")
        rows.append(SensitivityRow(
            judge=str(judge), protocol=str(protocol), row=SENSITIVITY_ROW,
            n=int(part["judged"].sum()), documents=part[DOC].n_unique(),
            effect_name="SENS (intact − degraded)", effect=pooled.found,
            up=up, down=down, p=p,
        ))  # fmt: skip
    return rows


def sensitivity_verdict(row: RowBase, q: float | None, threshold: float, fdr: float) -> str:
    """SENSITIVE when the sign test holds after BH and the interval's lower end ≥ threshold."""
    lo = row.effect.lo if row.effect is not None else None
    reads = q is not None and q <= fdr and lo is not None and lo >= threshold
    return SENSITIVE if reads else INSENSITIVE


Row = TypeVar("Row", bound=RowBase)


def gate(rows: list[Row]) -> list[Row]:
    """Rows that would pass for a judge × protocol not shown to read: INSENSITIVE.

    A pass is CLEAR, or STABLE on a wording row: a judge that says the same whatever it is shown
    passes them by construction (``passes``). Shown to read: it has a reading row (sensitivity,
    accuracy: ``reading``) and every one it has is SENSITIVE — a judge that passes the degraded
    copies but cannot pick gold beyond chance (or the reverse) is not.
    """
    reading = [r for r in rows if r.reading]
    failed = {(r.judge, r.protocol) for r in reading if r.verdict != SENSITIVE}
    shown = {(r.judge, r.protocol) for r in reading} - failed

    return [
        r.model_copy(update={"verdict": INSENSITIVE})
        if r.passes() and (r.judge, r.protocol) not in shown
        else r
        for r in rows
    ]
