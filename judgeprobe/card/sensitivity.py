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

import polars as pl

from judgeprobe.card.pairs import direction_test
from judgeprobe.card.wording import ROW as WORDING
from judgeprobe.card.wording import STABLE
from judgeprobe.metrics.sensitivity import POOLED, sensitivity_units
from judgeprobe.metrics.units import DOC, with_optional

ROW = "sensitivity"
SENSITIVE, INSENSITIVE = "SENSITIVE", "INSENSITIVE"


def _tidy_sens(tidy: pl.DataFrame, judge: str, protocol: str) -> dict[str, object]:
    level = pl.col("versus").is_null() if "versus" in tidy.columns else pl.lit(True)
    found = tidy.filter(
        level & (pl.col("judge") == judge) & (pl.col("protocol") == protocol)
        & (pl.col("condition") == POOLED) & (pl.col("metric") == "SENS")
    )  # fmt: skip
    if found.is_empty():
        return {"effect": None, "effect_lo": None, "effect_hi": None}
    r = found.row(0, named=True)
    return {"effect": r["value"], "effect_lo": r["lo"], "effect_hi": r["hi"]}


def sensitivity_rows(judgments: pl.DataFrame, tidy: pl.DataFrame) -> list[dict[str, object]]:
    """One untested-yet row per judge × protocol with sensitivity judgments (no q, no verdict).

    ``effect`` is the pooled SENS with its interval from the metrics table ``tidy``; ``up`` and
    ``down`` the documents whose verdicts favour the intact text or the copy, and ``p`` their
    exact test.
    """
    j = with_optional(judgments.lazy()).with_columns(pl.col(DOC).cast(pl.String))
    units = (
        sensitivity_units(j.with_columns(pl.col("condition").cast(pl.Categorical)))
        .filter(pl.col("condition") == POOLED)
        .with_columns(pl.col("judge", "protocol").cast(pl.String))
        .collect()
    )
    rows: list[dict[str, object]] = []
    for (judge, protocol), part in sorted(
        units.partition_by(["judge", "protocol"], as_dict=True).items()
    ):
        up, down, p = direction_test(part, pl.col("intact") - pl.col("worse"))
        rows.append({
            "judge": judge, "protocol": protocol, "row": ROW, "kind": ROW,
            "n": int(part["judged"].sum()), "documents": part[DOC].n_unique(),
            "effect_name": "SENS (intact − degraded)",
            **_tidy_sens(tidy, str(judge), str(protocol)),
            "up": up, "down": down, "p": p,
        })  # fmt: skip
    return rows


def sensitivity_verdict(row: dict[str, object], q: float | None, threshold: float,
                        fdr: float) -> str:  # fmt: skip
    """SENSITIVE when the sign test holds after BH and the interval's lower end ≥ threshold."""
    lo = row.get("effect_lo")
    reads = q is not None and q <= fdr and isinstance(lo, float) and lo >= threshold
    return SENSITIVE if reads else INSENSITIVE


READING = (ROW, "accuracy")
"""The rows that show a judge reads: the degraded copies (here) and gold (``card.gold``)."""


def gate(rows: pl.DataFrame) -> pl.DataFrame:
    """Rows that would pass for a judge × protocol not shown to read: INSENSITIVE.

    A pass is CLEAR, or STABLE on a wording row: a judge that says the same whatever it is shown
    passes them by construction. Shown to read: it has a reading row (``READING``) and every one
    it has is SENSITIVE — a judge that passes the degraded copies but cannot pick gold beyond
    chance (or the reverse) is not.
    """
    reading = rows.filter(pl.col("kind").is_in(READING))
    key = pl.struct("judge", "protocol")
    failed = reading.filter(pl.col("verdict") != SENSITIVE).select(key).to_series().implode()
    shown = key.is_in(reading.filter(~key.is_in(failed)).select(key).to_series().implode())
    verdict = pl.col("verdict")
    passes = (verdict == "CLEAR") | ((pl.col("kind") == WORDING) & (verdict == STABLE))
    blind = passes & ~shown
    return rows.with_columns(
        verdict=pl.when(blind).then(pl.lit(INSENSITIVE)).otherwise(pl.col("verdict"))
    )
