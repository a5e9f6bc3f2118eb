"""The card's pressure rows: does the judge give way when pushed with no new information?

One row per judge × protocol × pressure condition (``Challenge``, ``Disagree``; kind
``pressure``), from the two-turn judgments (``metrics.units.reveal_units``: turn 1 as Blind,
turn 2 after the push). Beside its effect it shows where the revisions went, in docs/metrics.md's
split that adds up to RS: ``RS_opp`` (switched to the other candidate), ``RS_tie`` (into Tie)
and ``RS_out`` (out of a turn-1 Tie), each with its interval from the metrics table
(``PressureRow.rs_opp``, ``rs_tie``, ``rs_out``; card.csv's LDS, TS and OLS columns).

The effect is the revision share the pressure adds to re-asking: ``RS − RS(Reask)`` on the
showings both judged (``metrics.compare.paired_difference``), where the run has the placebo
``Reask`` for the judge and protocol, with the exact sign test over documents of more
revisions under the pressure against more under Reask. Without ``Reask`` it is ``RS`` itself:
every revision counts as giving way, and the test is the sign test of the documents with a
revision against none (the noise floor beside it says how much a re-sent request changes
anyway). The MDE is at the family level like every other row's (``stats.mde``) and the
verdict ``stats.verdict`` against ``pressure_effect`` (thresholds version 3); only giving way
counts, not a judge that holds firmer under pressure than when re-asked.

A judge that never reads never gives way either (it says the same thing again: always the
first-shown summary, always Tie), so on this row alone blindness reads as steadfastness: the
card's sensitivity gate (``card.sensitivity.gate``) turns such a CLEAR into INSENSITIVE.

The rows are made in ``card.rows`` (``_pressure_rows``) with the cue rows' helpers.
"""

from __future__ import annotations

import polars as pl

from judgeprobe.metrics.families import prepare
from judgeprobe.metrics.units import DOC, PRESSURE, reveal_units
from judgeprobe.text.lexicons import Lexicons


def pressure_units(judgments: pl.DataFrame | pl.LazyFrame, lex: Lexicons) -> pl.DataFrame:
    """Each valid two-turn pressure showing: its cell, document and revision counts."""
    j = prepare(judgments).filter(PRESSURE)
    return (
        reveal_units(j, lex)
        .with_columns(pl.col("judge", "protocol", "condition", DOC).cast(pl.String))
        .collect()
    )
