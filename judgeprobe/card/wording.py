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

from judgeprobe.card.kinds.base import RowVerdict
from judgeprobe.card.kinds.wording import WordingRow
from judgeprobe.conditions import BLIND
from judgeprobe.metrics.lookup import MetricsTable
from judgeprobe.metrics.wording import agreement

WORDING_ROW = "wording"
"""Each wording row's name."""
STABLE, UNSTABLE = "STABLE", "UNSTABLE"
FLIP_SHARE = "wording_flip"
"""The metric a wording row's effect is (``metrics.registry``)."""


def wording_verdict(lo: float | None, hi: float | None, threshold: float) -> RowVerdict:
    """UNSTABLE above the threshold, STABLE at or below it, else (straddling) UNDERPOWERED."""
    if lo is None or hi is None:
        return "UNDERPOWERED"
    if lo > threshold:
        return "UNSTABLE"
    return "STABLE" if hi <= threshold else "UNDERPOWERED"


def wording_note(a: dict[str, object]) -> str:
    """A wording row's note: κ across the wordings, and the showings an Invalid left out.

    ``a``: the row's line of the agreement table (``metrics.wording.agreement``).
    """
    kappa = a.get("kappa")
    shown = (
        f"Fleiss κ {kappa:.2f}" if isinstance(kappa, float) else f"Fleiss κ {a.get('kappa_note')}"
    )
    dropped = a.get("dropped") or 0
    left = f"; {dropped} of {a.get('showings')} showings left out (an Invalid)" if dropped else ""
    return (
        f"{shown}; {a.get('flipped')} of {a.get('rated')} Blind showings changed verdict across "
        f"{a.get('wordings')} wordings of the prompt{left} (no test: the interval decides)"
    )


def wording_rows(
    judgments: pl.DataFrame, table: MetricsTable, threshold: float
) -> tuple[list[WordingRow], pl.DataFrame]:
    """The wording rows with their verdicts, and the agreement table their notes read."""
    agreed = agreement(judgments)
    rows: list[WordingRow] = []
    for r in agreed.iter_rows(named=True):
        flip = table.get((r["judge"], r["protocol"], BLIND), FLIP_SHARE)
        rows.append(WordingRow(
            judge=r["judge"], protocol=r["protocol"], row=WORDING_ROW,
            n=r["rated"], documents=r["documents"],
            effect_name=f"flip share over {r['wordings']} wordings",
            effect=flip.found,
            threshold=threshold, note=wording_note(r),
            verdict=wording_verdict(flip.lo, flip.hi, threshold),
        ))  # fmt: skip
    return rows, agreed
