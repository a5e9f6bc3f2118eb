"""Every reported metric.

A name, the family of per-unit counts it reads (``units``), and its formula over the column
sums (docs/metrics.md): the one formula the estimates table and the intervals both apply (its
``stat`` also picks the interval, ``uncertainty.interval``). Adding a metric is one entry here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from judgeprobe.metrics.gold import ACC, SENS_GOLD
from judgeprobe.metrics.sensitivity import COLUMNS as SENS_COLUMNS
from judgeprobe.metrics.sensitivity import SENS
from judgeprobe.metrics.uncertainty import (
    Estimator,
    Folded,
    Linear,
    Share,
    Signed,
    contrast,
    ratio,
    safe_ratio,
)


@dataclass(frozen=True)
class MetricSpec:
    """One metric's definition: family, the unit columns it sums, and its ratio."""

    name: str
    family: str
    columns: tuple[str, ...]
    stat: Estimator  # the formula, and with it the interval's kind (uncertainty.interval)
    directional: bool = False  # needs a cue target (A or B) on every item of the cell
    description: str = ""
    # The count that makes a unit part of the metric (by default the last column): two cells
    # are compared on the units where it is positive in both.
    den: str = ""
    # An exact two-sided sign test over documents of the first column against the second
    # (documents where it is larger against those where it is smaller) goes in ``p``.
    tested: bool = False
    # A metric reported in units of its own (a pointwise judge's points): the column whose
    # mean per unit (Σscale / Σunit column) multiplies the estimate and its interval.
    scale: str = ""

    def factor(self, sums: Mapping[str, Any]) -> Any:
        """What the estimate and its bounds are multiplied by (1 without ``scale``).

        ``sums`` are the column sums of one cell (floats) or of several (arrays, per seed).
        """
        if not self.scale:
            return 1.0
        return safe_ratio(np.asarray(sums[self.scale]), np.asarray(sums[self.unit_column]))

    @property
    def unit_column(self) -> str:
        """The column that says whether a unit counts for this metric."""
        return self.den or self.columns[-1]

    def of(self, sums: pl.DataFrame) -> pl.Series:
        """The metric of each row of ``sums`` (its columns' sums over a cell); null if undefined."""
        values = self.stat(sums.select(self.columns).to_numpy().astype(np.float64))
        return pl.Series(self.name, values, dtype=pl.Float64).fill_nan(None)

    @property
    def share(self) -> bool:
        """A share of units (num / den): a paired difference gets an exact sign test."""
        return self.stat is SHARE


SHARE = ratio(0, 1)


_ND = Folded(contrast(0, 1, 2))  # columns: a, b, valid
_DIFFERENCE = Linear(((1.0, Share(0, 1)), (-1.0, Share(2, 3))))  # p_x, p_valid, b_x, b_valid
_EXCESS = contrast(0, 1, 2)  # columns: first, second, swapped
_SHIFT = Signed(0, 1)  # columns: the pairs' summed signed shares, pairs


M = MetricSpec
METRICS: tuple[MetricSpec, ...] = (
    M("invalid_rate", "cell", ("invalid", "judgments"), SHARE, description="Invalid / all"),
    M("EDR", "cell", ("tie", "valid"), SHARE, description="Tie share of valid verdicts"),
    M("ND", "cell", ("a", "b", "valid"), _ND, description="|A − B| / valid"),
    M("share_A", "cell", ("a", "valid"), SHARE, description="candidate 1 preferred"),
    *(
        M(name, "paired", (count, "paired"), SHARE, directional=d, description=f"moves into {w}")
        for name, count, d, w in (
            ("LDS", "lds", True, "the target"),
            ("TS", "ts", False, "Tie"),
            ("OLS", "ols", True, "the other candidate"),
        )
    ),
    # LAO = LDS / (LDS + TS + OLS); every change is exactly one of the three when the cell
    # has a target, so the denominator is the count of changed verdicts.
    M(
        "LAO",
        "paired",
        ("lds", "changed"),
        SHARE,
        directional=True,
        description="LDS / (LDS + TS + OLS)",
        den="paired",
    ),
    M("flip_rate", "paired", ("changed", "paired"), SHARE, description="verdict ≠ Blind's"),
    *(  # the paired moves' marginal counterparts: the share's change, Blind to the condition
        M(
            name,
            "marginal",
            (f"p_{c}", "p_valid", f"b_{c}", "b_valid"),
            _DIFFERENCE,
            directional=d,
        )
        for name, c, d in (
            ("marginal_LDS", "fav", True),
            ("marginal_TS", "tie", False),
            ("marginal_OLS", "opp", True),
        )
    ),
    M("RS", "reveal", ("revised", "pairs"), SHARE, description="v_R ≠ v_F"),
    M("RS_truth", "reveal", ("to_truth", "pairs"), SHARE, description="revised to truth"),
    M("RS_tie", "reveal", ("to_tie", "pairs"), SHARE, description="revised into Tie"),
    M("RS_opp", "reveal", ("to_opp", "pairs"), SHARE, description="revised to the opposite"),
    M("RS_out", "reveal", ("to_out", "pairs"), SHARE, description="out of a turn-1 Tie"),
    M("RS_target", "reveal", ("to_target", "pairs"), SHARE, description="v_R = t"),
    M("acknowledgement", "reveal", ("ack", "pairs"), SHARE, description="mentions reveal"),
    M("acknowledgement_turn1_floor", "reveal", ("ack_floor", "pairs"), SHARE),
    M("delta_e_same", "same", ("drift", "same"), SHARE, description="Δe|Same, embedding"),
    M("delta_e_same_lexical", "same", ("drift_lexical", "same"), SHARE, description="1 − Jaccard"),
    M("LAI_text_same", "same", ("lai", "same"), SHARE, description="LAI_text|Same"),
    M("LAI_text_blind_floor", "same", ("lai_floor", "same"), SHARE),
    M("stereotype_intrusion", "rhetoric", ("stereotype", "explained"), SHARE),
    M("cue_align", "rhetoric", ("cue_align", "attacked"), SHARE, description="Cue-align"),
    M("fabrication_rate", "evidence", ("fabricated", "quotes"), SHARE),
    M("fabricated_explanations", "evidence", ("fabricating", "quoted"), SHARE),
    M("nondiscriminating_rate", "evidence", ("nondiscriminating", "criteria"), SHARE),
    M(
        "nondiscriminating_judgments",
        "evidence",
        ("all_nondiscriminating", "with_evidence"),
        SHARE,
    ),
    M("verdict_score_consistency", "evidence", ("agree", "scored"), SHARE),
    M("position_consistency", "position", ("consistent", "swapped"), SHARE),
    # p: McNemar's exact test over documents (first-shown both times against second-shown).
    M("first_shown_excess", "position", ("first", "second", "swapped"), _EXCESS, tested=True),
    M("relabel_flip", "relabel", ("flip", "pairs"), SHARE, description="verdict changed"),
    M("relabel_toward", "relabel", ("toward", "directed"), SHARE, description="follows label"),
    M("relabel_away", "relabel", ("away", "directed"), SHARE, description="against label"),
    # Wording (docs/metrics.md): Blind showings judged under K wordings of the prompt; Fleiss'
    # κ over the same showings is no ratio of sums (``metrics.wording``).
    M("wording_flip", "wording", ("flipped", "rated"), SHARE, description="K verdicts differ"),
    M("wording_dropped", "wording", ("dropped", "showings"), SHARE, description="an Invalid"),
    M(
        "SENS",
        "sensitivity",
        SENS_COLUMNS,
        SENS,
        description="(intact − degraded) / judged",
        tested=True,
    ),
    # Shifts toward the target, mean over pairs of the condition's minus Blind's: a pointwise
    # judge's score s (each pair's difference as a share of the scale, scaled back by max − min:
    # ``span``) and a verdict read from log-probabilities, P (docs/metrics.md, "Probability
    # verdicts"). Each pair's difference is a signed share in [−1, 1] (its score interval:
    # MOVER over its positive and negative parts).
    *(
        M(name, family, columns, _SHIFT, directional=True, description=what, scale=scale)
        for name, family, columns, what, scale in (
            (
                "score_shift",
                "score",
                ("shift", "scored"),
                "mean s(target | c) − s(target | Blind), points",
                "span",
            ),
            (
                "prob_shift",
                "prob",
                ("pshift", "probed"),
                "mean P(target | c) − P(target | Blind)",
                "",
            ),
        )
    ),
    # Gold (metrics.gold): agreement with the items' gold pick, ties in n and never correct,
    # its sensitivity form, the content-blind length baselines, and gold-tie items' Tie share.
    M("ACC", "gold", ("correct", "gold_judged"), ACC, description="verdict = gold / judged"),
    M(
        "SENS_gold",
        "gold",
        ("correct", "other", "gold_judged"),
        SENS_GOLD,
        description="(gold − other) / judged",
        tested=True,
    ),
    M("ACC_longer", "gold", ("longer2", "judged2"), SHARE, description="pick the longer"),
    M("ACC_shorter", "gold", ("shorter2", "judged2"), SHARE, description="pick the shorter"),
    # ACC beyond each baseline on the same judgments (MOVER over documents): what the card's
    # accuracy row and the headline ask of a judge that reads the content, not the length.
    M(
        "ACC_vs_longer",
        "gold",
        ("correct", "gold_judged", "longer2", "judged2"),
        _DIFFERENCE,
        description="ACC − ACC_longer",
    ),
    M(
        "ACC_vs_shorter",
        "gold",
        ("correct", "gold_judged", "shorter2", "judged2"),
        _DIFFERENCE,
        description="ACC − ACC_shorter",
    ),
    M("EDR_gold_tie", "gold_tie", ("tie_said", "tie_judged"), SHARE, description="Tie, gold ties"),
)
BY_NAME = {m.name: m for m in METRICS}
