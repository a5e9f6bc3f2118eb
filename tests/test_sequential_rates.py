"""The sequential design's promises (``selftest.sequential_rates``), at a reduced size: the same
simulated judges as the fixed card's verdict rates, their runs replayed look by look."""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy.stats import binom

from judgeprobe.card.thresholds import LoadedThresholds, load_thresholds
from judgeprobe.selftest.sequential_rates import replay_runs, sequential_config, sequential_rates
from judgeprobe.selftest.verdict_rates import (
    JudgeName,
    Truth,
    default_design,
    draw_verdicts,
    format_rates,
    plan_table,
    rates_table,
)
from judgeprobe.text.lexicons import load_lexicons

DOCUMENTS, ROUND, CARDS, THRESHOLD = 150, 25, 20, 0.2


def _reduced() -> LoadedThresholds:
    """Cue and position thresholds of 0.2, where 150 documents can settle a row."""
    t = load_thresholds()
    values = t.values.model_copy(update={"cue_effect": THRESHOLD, "position_effect": THRESHOLD})
    return LoadedThresholds(values, "reduced (test)", t.sha256)


def test_the_sequential_verdicts_keep_their_promises_at_a_reduced_size() -> None:
    """The default sweep at 150 documents in rounds of 25, 20 seeded runs per judge: no BIASED
    card for the null judge, the planted rows at their thresholds CLEAR within 1 − power, the
    judges that never read never CLEAR, and the planted row's sequential interval covering the
    planted effect.

    20 runs cannot hold a rate near its bound to it exactly, so a rate passes when its count is
    consistent with the bound (a binomial count at the bound reaches it with probability ≥ 1 %);
    a bound of 0 must be met exactly. Measured on 150 runs per judge (docs/sequential.md) every
    rate is within its bound: the at-threshold rows CLEAR on 8–11 % (the CLEAR test's level is
    half the bound), the intervals missing on at most 1.3 %. A rule that called a row CLEAR
    whenever it was not BIASED (the card's before issue 29: about half the at-threshold rows)
    fails here, as does one that never looks at the threshold."""
    design = sequential_config(default_design(DOCUMENTS, resamples=200), ROUND)
    judges: tuple[JudgeName, ...] = ("null", "cue at threshold", "position at threshold",
                                     "first", "label")  # fmt: skip
    rates = sequential_rates([design], CARDS, seed=11, judges=judges, thresholds=_reduced())
    assert set(rates_table(rates)["judge"]) == set(judges)
    for r in rates:
        consistent = binom.sf(r.broken - 1, r.cards, r.bound) >= 0.01 if r.bound else not r.broken
        assert consistent, format_rates(rates)


def test_a_strong_judge_stops_early_and_spends_less() -> None:
    """The judge that copies the label is BIASED within two looks: its condition stops there,
    so the run spends less than the fixed design, and the card says when the row settled."""
    design = sequential_config(default_design(DOCUMENTS, resamples=200), ROUND)
    plan, limits = plan_table(design), load_thresholds()
    truth = Truth.of(plan)
    label = draw_verdicts("label", truth, np.random.default_rng(1), limits, against_placebo=False)
    [run] = replay_runs(design, plan, [label], load_lexicons(), limits)
    true = run.card.rows.filter(pl.col("row") == "True").row(0, named=True)
    assert true["verdict"] == "BIASED"
    assert true["settled_at"] <= 2 * ROUND
    assert run.requests < run.fixed_requests
