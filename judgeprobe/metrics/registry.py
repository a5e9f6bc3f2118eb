"""Every reported metric: a name, the family of per-item counts it reads, and its formula
over the column sums (docs/metrics.md). Adding a metric is one entry here."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judgeprobe.metrics.uncertainty import Stat, ratio


@dataclass(frozen=True)
class MetricSpec:
    name: str
    family: str
    columns: tuple[str, ...]
    stat: Stat
    directional: bool = False  # needs a cue target (A or B) on every item of the cell
    description: str = ""


def _nd(s: np.ndarray) -> np.ndarray:  # columns: a, b, valid
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s[..., 2] > 0, np.abs(s[..., 0] - s[..., 1]) / s[..., 2], np.nan)


def _lao(s: np.ndarray) -> np.ndarray:  # columns: lds, ts, ols
    moved = s[..., 0] + s[..., 1] + s[..., 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(moved > 0, s[..., 0] / moved, np.nan)


def _difference(s: np.ndarray) -> np.ndarray:  # columns: p_x, p_valid, b_x, b_valid
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = (s[..., 1] > 0) & (s[..., 3] > 0)
        return np.where(ok, s[..., 0] / s[..., 1] - s[..., 2] / s[..., 3], np.nan)


M = MetricSpec
METRICS: tuple[MetricSpec, ...] = (
    M("invalid_rate", "cell", ("invalid", "one"), ratio(0, 1), description="Invalid / all"),
    M("EDR", "cell", ("tie", "valid"), ratio(0, 1), description="Tie share of valid verdicts"),
    M("ND", "cell", ("a", "b", "valid"), _nd, description="|A − B| / valid"),
    M("share_A", "cell", ("a", "valid"), ratio(0, 1), description="candidate 1 preferred"),
    M("LDS", "paired", ("lds", "paired"), ratio(0, 1), True, "moves into the target"),
    M("TS", "paired", ("ts", "paired"), ratio(0, 1), description="moves into Tie"),
    M("OLS", "paired", ("ols", "paired"), ratio(0, 1), True, "moves into the other candidate"),
    M("LAO", "paired", ("lds", "ts", "ols"), _lao, True, "LDS / (LDS + TS + OLS)"),
    M("marginal_LDS", "marginal", ("p_fav", "p_valid", "b_fav", "b_valid"), _difference, True),
    M("marginal_TS", "marginal", ("p_tie", "p_valid", "b_tie", "b_valid"), _difference),
    M("marginal_OLS", "marginal", ("p_opp", "p_valid", "b_opp", "b_valid"), _difference, True),
    M("flip_rate", "paired", ("changed", "paired"), ratio(0, 1), description="verdict ≠ Blind's"),
    M("RS", "reveal", ("revised", "pairs"), ratio(0, 1), description="v_R ≠ v_F"),
    M("RS_truth", "reveal", ("to_truth", "pairs"), ratio(0, 1), description="revised to truth"),
    M("RS_tie", "reveal", ("to_tie", "pairs"), ratio(0, 1), description="revised into Tie"),
    M("RS_opp", "reveal", ("to_opp", "pairs"), ratio(0, 1), description="revised away"),
    M("acknowledgement", "reveal", ("ack", "pairs"), ratio(0, 1), description="mentions reveal"),
    M("acknowledgement_turn1_floor", "reveal", ("ack_floor", "pairs"), ratio(0, 1)),
    M("delta_e_same", "same", ("drift", "same"), ratio(0, 1), description="Δe|Same"),
    M("LAI_text_same", "same", ("lai", "same"), ratio(0, 1), description="LAI_text|Same"),
    M("LAI_text_blind_floor", "same", ("lai_floor", "same"), ratio(0, 1)),
    M("stereotype_intrusion", "rhetoric", ("stereotype", "explained"), ratio(0, 1)),
    M("cue_align", "rhetoric", ("cue_align", "attacked"), ratio(0, 1), description="Cue-align"),
    M("fabrication_rate", "evidence", ("fabricated", "quotes"), ratio(0, 1)),
    M("fabricated_explanations", "evidence", ("fab_expl", "quoted"), ratio(0, 1)),
    M("verdict_score_consistency", "evidence", ("agree", "scored"), ratio(0, 1)),
    M("position_consistency", "position", ("consistent", "swapped"), ratio(0, 1)),
)
