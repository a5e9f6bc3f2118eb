"""How a card speaks of what it can and cannot say: whether a row gates, and a log card's words.

Two rules the renderers (``card.render``, the report's card section, card.json's summary) share:

- a card says "all clear" only when it has a row that could have said otherwise: a row whose
  verdict can set an exit code. OBSERVED rows (a judge log's informational rows) and the repeat
  row (the judge's noise floor) cannot, so a card of them alone has "nothing to gate on";
- a judge-logs card (``Card.observed``) speaks of the log, not of a live design: its rule names
  only the rows it has, its table has no column that only a live design fills (LDS, TS, OLS,
  the noise floor, the silent-cue share), and its resampling unit is the question.
"""

from __future__ import annotations

import polars as pl

from judgeprobe.card.observed import INFORMATIONAL
from judgeprobe.card.record import AltTestRow, CardRow
from judgeprobe.card.rows import Card
from judgeprobe.metrics.uncertainty import Method, method_sentence

LIVE_COLUMNS = ("LDS", "TS", "OLS", "noise floor", "silent-cue")
"""The card table's columns that only a live design fills (a cue, a re-sent request)."""
NOTHING_TO_GATE = "nothing to gate on: no row can set an exit code"


def gates(row: CardRow) -> bool:
    """Whether the row's verdict could set an exit code (or, clear, leave it 0).

    Not an OBSERVED row, not the repeat row (the noise floor), not an alt-test row under
    thresholds that do not gate on it.
    """
    if isinstance(row, AltTestRow):
        return row.gates
    return row.verdict is not None and row.verdict != INFORMATIONAL and row.kind != "repeat"


def clear_meaning(card: Card) -> str:
    """What exit code 0 means on this card: "all clear" only where a row could have said not."""
    return "all clear" if any(gates(r) for r in card.records) else NOTHING_TO_GATE


def observed_table(shown: pl.DataFrame) -> pl.DataFrame:
    """An observed card's display table: the live-design columns out, documents as questions."""
    if shown.is_empty():
        return shown
    kept = shown.drop([c for c in LIVE_COLUMNS if c in shown.columns])
    return kept.rename({"n (docs)": "n (questions)"}) if "n (docs)" in kept.columns else kept


_ROWS = {
    "observed-position": (
        "position: first-shown chosen in both orders minus second-shown, over the items the log "
        "holds validly in both orders (only where the log keeps which response was shown "
        "first), consistency beside it"
    ),
    "observed-position-randomized": (
        "position (randomized): the log's tool itself shuffled which response was shown first "
        "(AlpacaEval) and the order was recovered from the judge's kept reply, so this row is "
        "an experiment, not an association: the first-shown share of decisive verdicts − ½, "
        "with the position threshold either way; rows whose order could not be recovered make "
        "no position claim"
    ),
    "observed-length": (
        "length: the longer response's win share over decisive verdicts on pairs of unequal "
        "length, minus the human labels' on the same labelled pairs (or minus ½ without labels)"
    ),
    "observed-self-preference": (
        "self-preference: the judge's own model's win rate (ties ½) minus its win rate under "
        "the human labels (or under the other judges in the logs) on the same items"
    ),
    "observed-agreement": "agreement: Cohen's κ of the judge's item verdicts with the human labels",
    "observed-unreadable": "unreadable: Invalid verdicts over verdicts",
    "observed-drift": "drift: item verdicts changed against the baseline log on the same items",
}


def method_over_questions(method: Method) -> str:
    """How the intervals were computed, over a log's resampling unit: its questions."""
    return (
        method_sentence(method)
        .replace("documents", "questions")
        .replace("a document's", "a question's")
    )


def _names(rows: list[CardRow]) -> str:
    return ", ".join(dict.fromkeys(r.row.removesuffix(" (observed)") for r in rows))


def observed_rule(card: Card) -> str:
    """An observed card's rule in words: what its rows measure, which of them decide."""
    t = card.thresholds.values
    kinds = {r.kind for r in card.records}
    measured = "; ".join(text for kind, text in _ROWS.items() if kind in kinds)
    tested = [r for r in card.records if gates(r)]
    shown = [r for r in card.records if not gates(r)]
    decided = (
        f"Decide a verdict ({_names(tested)}): BIASED when the row's exact sign test over "
        f"questions is significant after Benjamini–Hochberg across every test on this card "
        f"(q ≤ {t.fdr}) and its effect is at least the threshold (position: either way); "
        f"CLEAR: not BIASED, the log could have shown an effect of the threshold (minimum "
        f"detectable effect ≤ threshold at level {t.alpha}, power {t.power}) and a significant "
        f"effect's interval lies below it; UNDERPOWERED: neither, never 'no bias'. "
        if tested
        else ""
    )
    informational = f"Shown with no exit code (OBSERVED): {_names(shown)}. " if shown else ""
    return (
        "Observed rows (judge logs): what the judge already said, nothing intervened on, so "
        "each is an association in its own traffic. "
        + (f"Rows: {measured}. " if measured else "")
        + decided
        + informational
        + method_over_questions(card.method)
        + "."
    )
