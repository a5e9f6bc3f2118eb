"""The card's wording rows: does the judge change its verdict with the wording of its prompt?

One row per judge × protocol whose Blind showings were judged under K ≥ 2 wordings (the
sweep's ``wordings``, or a judge's own prompt's ``wordings``; kind ``wording``). Its effect is
the wording flip share, the share of rated showings whose K verdicts are not all equal, with
its document-level 95% interval from the metrics table (``wording_flip``); Fleiss' κ across
the wordings and the showings left out for an Invalid are in the row's note
(``metrics.wording``), and the judge's noise floor (Blind sent again) beside it, since a
re-sent request may change its verdict whatever the wording.

The verdict reads the interval against ``max_wording_flip`` (thresholds version 4): UNSTABLE
when its lower end lies above the threshold (the flip share is significantly above it,
one-sided at 2.5%), STABLE when its upper end lies at or below it, UNDERPOWERED when it
straddles it or nothing was rated. UNSTABLE counts as BIASED for the exit code.

A judge that never reads (always the first-shown summary, always Tie) says the same under
every wording: its flip share is 0 by construction. So STABLE is a pass only for a judge shown
to read: the card's sensitivity gate (``card.sensitivity.gate``) turns a STABLE wording row
of a judge × protocol without a SENSITIVE row into INSENSITIVE, as it does a CLEAR.
"""

from __future__ import annotations

import polars as pl

from judgeprobe.metrics.wording import agreement

ROW = "wording"
STABLE, UNSTABLE = "STABLE", "UNSTABLE"
METRIC = "wording_flip"


def _flip(tidy: pl.DataFrame, judge: str, protocol: str) -> tuple[object, object, object]:
    level = pl.col("versus").is_null() if "versus" in tidy.columns else pl.lit(True)
    found = tidy.filter(
        level & (pl.col("judge") == judge) & (pl.col("protocol") == protocol)
        & (pl.col("condition") == "Blind") & (pl.col("metric") == METRIC)
    )  # fmt: skip
    if found.is_empty():
        return None, None, None
    r = found.row(0, named=True)
    return r["value"], r["lo"], r["hi"]


def wording_verdict(lo: object, hi: object, threshold: float) -> str:
    """UNSTABLE above the threshold, STABLE at or below it, else (straddling) UNDERPOWERED."""
    if not isinstance(lo, float) or not isinstance(hi, float):
        return "UNDERPOWERED"
    if lo > threshold:
        return UNSTABLE
    return STABLE if hi <= threshold else "UNDERPOWERED"


def wording_rows(
    judgments: pl.DataFrame, tidy: pl.DataFrame, threshold: float
) -> tuple[list[dict[str, object]], pl.DataFrame]:
    """The wording rows with their verdicts, and the agreement table their notes read."""
    table = agreement(judgments)
    rows: list[dict[str, object]] = []
    for r in table.iter_rows(named=True):
        value, lo, hi = _flip(tidy, r["judge"], r["protocol"])
        rows.append({
            "judge": r["judge"], "protocol": r["protocol"], "row": ROW, "kind": ROW,
            "n": r["rated"], "documents": r["documents"],
            "effect_name": f"flip share over {r['wordings']} wordings",
            "effect": value, "effect_lo": lo, "effect_hi": hi, "threshold": threshold,
            "verdict": wording_verdict(lo, hi, threshold),
        })  # fmt: skip
    return rows, table
