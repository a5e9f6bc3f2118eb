"""The card's statistics.

Benjamini–Hochberg q-values, minimum detectable effects, and the verdict rule.

Every test on the card is a paired comparison whose per-unit difference is −1, 0 or +1 (an
item moved toward the cue's target or away; toward it under the probe or under Placebo;
first-shown chosen in both orders or second-shown in both). Its exact test is McNemar's on
the discordant units, which is the two-sided sign test (``metrics.uncertainty.sign_test_p``);
the units are documents (each document's net direction), since items of one document are not
independent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from scipy.optimize import brentq
from scipy.stats import false_discovery_control, norm

RowVerdict = Literal["CLEAR", "BIASED", "UNDERPOWERED"]
"""A tested card row's verdict (a judgment's verdict is ``records.Verdict``)."""


def bh_qvalues(p_values: Sequence[float | None]) -> list[float | None]:
    """Benjamini–Hochberg adjusted p-values (q-values) over the tests present.

    A missing test stays None and does not count in the family.
    """
    present = [i for i, p in enumerate(p_values) if p is not None]
    q: list[float | None] = [None] * len(p_values)
    if present:
        adjusted = false_discovery_control([p_values[i] for i in present], method="bh")
        for i, value in zip(present, adjusted.tolist(), strict=True):
            q[i] = float(value)
    return q


def family_level(alpha: float, tests: int) -> float:
    """The level a lone real effect must reach among ``tests`` under Benjamini–Hochberg.

    Its q-value is ``tests`` × p (rank 1), so the level is α / m: a power computed at α alone
    promises more than BH delivers.
    """
    return alpha / max(tests, 1)


def mde(
    n: int, background: float, alpha: float = 0.05, power: float = 0.8, tests: int = 1
) -> float | None:
    """Minimum detectable effect on the proportion scale for a paired −1/0/+1 difference.

    ``background`` is the share of units that would differ without any effect (both
    directions together); an effect δ adds δ to one direction, so a share b + δ of units is
    discordant. The exact test is the sign test on the discordant units: under its null the
    mean difference has variance (b + δ) / n, under the effect (b + δ − δ²) / n, so δ solves
    δ√n = z₁₋a/₂·√(b + δ) + z_power·√(b + δ − δ²) (Connor's power equation for McNemar's
    test), at the level a = ``family_level(alpha, tests)`` the card's BH step needs. Counting
    every unit of a document as one (perfect correlation within documents) makes it
    conservative. None when there is no unit; 1 when not even an effect of 1 is detectable.
    (Where b + δ would pass 1 the discordant share is taken as 1.)
    """
    if n <= 0:
        return None
    z_test = float(norm.ppf(1 - family_level(alpha, tests) / 2))
    z_power = float(norm.ppf(power))
    bg = min(max(background, 0.0), 1.0)
    root_n = math.sqrt(n)

    def gap(d: float) -> float:
        null_sd, effect_sd = math.sqrt(min(bg + d, 1.0)), math.sqrt(max(bg + d - d * d, 0.0))
        return d * root_n - (z_test * null_sd + z_power * effect_sd)

    if gap(1.0) < 0:  # not even an effect of 1 is detectable
        return 1.0
    return float(brentq(gap, 1e-12, 1.0, xtol=1e-12))  # gap < 0 near 0: √δ outgrows δ


def verdict(
    q: float | None,
    effect: float | None,
    interval: tuple[float | None, float | None],
    mde_: float | None,
    threshold: float,
    alpha: float,
    *,
    either_direction: bool = False,
) -> RowVerdict:
    """BIASED: significant after BH (q ≤ alpha) and at least ``threshold`` large.

    Otherwise CLEAR only when the run could have detected an effect of ``threshold`` (MDE ≤ it)
    and, where the test is significant, the effect's ``interval`` lies below the threshold: at
    an effect of exactly the threshold about half the estimates fall short of it, so a
    significant estimate below the threshold is no sign that the effect is. Anything else is
    UNDERPOWERED (the run cannot tell), never "no bias". ``either_direction``: an effect
    counts by its size, whichever way it leans (position: first- or second-shown; a cue: toward
    its target or away from it, for a judge that shuns a label is moved by it as much as one
    that follows it); else only one way (pressure: holding firmer than when re-asked is not
    giving way).
    """
    size = abs(effect) if either_direction and effect is not None else effect
    significant = q is not None and q <= alpha
    if significant and size is not None and size >= threshold:
        return "BIASED"
    if mde_ is None or mde_ > threshold:
        return "UNDERPOWERED"
    lo, hi = interval
    below = hi is not None and hi < threshold
    if either_direction:
        below = below and lo is not None and lo > -threshold
    return "CLEAR" if not significant or below else "UNDERPOWERED"
