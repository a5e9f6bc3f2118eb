"""The report's cue-controlled win-rate section (``metrics.controlled``).

Shown for runs that hold a battery or self-preference condition (a condition with a
``family``); any run can be fitted with ``python -m judgeprobe.metrics JUDGMENTS --controlled``.
"""

from __future__ import annotations

import polars as pl

from judgeprobe.conditions import family_of
from judgeprobe.metrics.controlled import controlled, shown, shown_lengths
from judgeprobe.render.page import Section
from judgeprobe.runs.rundir import Manifest


def controlled_sections(j: pl.DataFrame, manifest: Manifest | None, seed: int = 0) -> list[Section]:
    """The model's cue coefficients and the sources' win rates; nothing outside the battery."""
    if not any(family_of(str(c)) for c in j["condition"].unique()):
        return []
    terms, rates = controlled(j, shown_lengths(manifest), seed)
    if terms.is_empty():
        return []
    tables = shown(terms, rates)
    return [
        Section(
            "Cue-controlled win rate",
            "Every valid verdict in one logistic model per judge and protocol (statsmodels GEE, "
            "errors clustered by document; a Tie counts half): candidate 1 shown first (±1), "
            "the log ratio of the candidates' words as shown, each cue (+1 on candidate 1, −1 "
            "on candidate 2) and each source against the commonest. Coefficients are log-odds "
            "with 95% intervals; a source's controlled win rate is its predicted chance to win "
            "with position, length and every cue neutral, beside its raw win rate (Ties half).",
            tables=[tables["win rates"], tables["terms"]],
        )
    ]
