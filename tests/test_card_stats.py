"""The card's statistics against library implementations (statsmodels, scipy), its verdict
rule, and its thresholds file."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from judgeprobe import JudgeprobeError
from judgeprobe.card import stats
from judgeprobe.card.thresholds import load_thresholds
from judgeprobe.metrics.uncertainty import sign_test_p


def test_bh_qvalues_equal_statsmodels_fdr_bh() -> None:
    rng = random.Random(7)
    for size in (1, 2, 5, 17, 60):
        p = [rng.random() ** 3 for _ in range(size)]
        p[0] = p[-1]  # ties
        want = multipletests(p, method="fdr_bh")[1]
        got = np.asarray(stats.bh_qvalues(p), dtype=float)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_bh_leaves_missing_tests_out_of_the_family() -> None:
    p = [0.01, None, 0.04, 0.03, None]
    present = [x for x in p if x is not None]
    want = iter(multipletests(present, method="fdr_bh")[1])
    got = stats.bh_qvalues(p)
    assert got[1] is None
    assert got[4] is None
    for q in got:
        if q is not None:
            assert q == pytest.approx(next(want), abs=1e-12)
    assert stats.bh_qvalues([]) == []


def _sign_test_power(n: int, background: float, effect: float, level: float) -> float:
    """The exact power of the two-sided sign test on n paired −1/0/+1 units: a share
    ``background`` differ at even odds, and ``effect`` more go one way (exact binomials)."""
    discordant = background + effect
    toward = (background / 2 + effect) / discordant
    power = 0.0
    for d in range(1, n + 1):
        k = np.arange(d + 1)
        p = np.minimum(1.0, 2 * np.minimum(binom.cdf(k, d, 0.5), binom.sf(k - 1, d, 0.5)))
        power += binom.pmf(d, n, discordant) * binom.pmf(k, d, toward)[p <= level].sum()
    return float(power)


@pytest.mark.parametrize("n", [100, 400, 1000])
@pytest.mark.parametrize("background", [0.05, 0.3, 0.5])
@pytest.mark.parametrize("tests", [1, 20])
def test_the_exact_sign_test_has_the_promised_power_at_the_mde(
    n: int, background: float, tests: int
) -> None:
    """At δ = MDE the card's own test (the exact sign test over documents) at the family's
    level α / m rejects with about the promised 0.8 (the equation is its normal approximation;
    the exact test's discreteness moves it by a few points)."""
    d = stats.mde(n, background, tests=tests)
    assert d is not None
    assert 0 < d < 1
    power = _sign_test_power(n, background, d, stats.family_level(0.05, tests))
    assert power == pytest.approx(0.8, abs=0.04), (d, power)


def test_an_mde_at_the_level_alpha_alone_promises_power_bh_does_not_give() -> None:
    """Why the MDE is at α / m: powered for α alone, a row among 20 tests has far less than
    0.8 power where BH needs p ≤ α / 20 of a lone effect."""
    d = stats.mde(1000, 0.3, tests=1)
    assert d is not None
    assert _sign_test_power(1000, 0.3, d, stats.family_level(0.05, 20)) < 0.55
    wider = stats.mde(1000, 0.3, tests=20)
    assert wider is not None
    assert wider > d


def _mde(n: int, background: float) -> float:
    value = stats.mde(n, background)
    assert value is not None, (n, background)
    return value


def test_mde_shrinks_with_n_and_grows_with_background() -> None:
    by_n = [_mde(n, 0.1) for n in (20, 80, 320, 1280)]
    assert by_n == sorted(by_n, reverse=True)
    by_bg = [_mde(100, bg) for bg in (0.0, 0.1, 0.4)]
    assert by_bg == sorted(by_bg)
    assert stats.mde(0, 0.1) is None
    assert stats.mde(2, 0.9) == 1.0  # nothing smaller than the whole scale is detectable


@pytest.mark.parametrize(("up", "down"), [(0, 1), (7, 0), (12, 5), (40, 55), (3, 3)])
def test_the_sign_test_is_mcnemars_exact_test(up: int, down: int) -> None:
    table = [[10, up], [down, 10]]
    want = mcnemar(table, exact=True).pvalue
    assert sign_test_p(up, up + down) == pytest.approx(want, rel=1e-12)
    assert sign_test_p(0, 0) is None


def test_verdict_rule() -> None:
    v = stats.verdict
    near = (None, None)  # no interval
    assert v(0.001, 0.20, (0.15, 0.25), 0.03, 0.05, 0.05) == "BIASED"
    assert v(0.001, 0.02, (0.01, 0.03), 0.01, 0.05, 0.05) == "CLEAR"  # real, shown below it
    assert v(0.30, 0.20, near, 0.30, 0.05, 0.05) == "UNDERPOWERED"  # large, not significant
    assert v(0.30, 0.00, near, 0.04, 0.05, 0.05) == "CLEAR"  # null with power
    assert v(None, None, near, 0.10, 0.05, 0.05) == "UNDERPOWERED"  # null without power
    assert v(0.001, -0.30, (-0.4, -0.2), 0.02, 0.05, 0.05) == "CLEAR"  # away from the cue
    # position leans either way: a second-shown excess is as much a position bias
    assert v(0.001, -0.30, (-0.4, -0.2), 0.02, 0.05, 0.05, either_direction=True) == "BIASED"
    assert v(0.001, -0.02, (-0.03, -0.01), 0.01, 0.05, 0.05, either_direction=True) == "CLEAR"
    assert v(0.001, 0.02, (-0.06, 0.03), 0.01, 0.05, 0.05, either_direction=True) == (
        "UNDERPOWERED"
    )


def test_a_significant_effect_below_the_threshold_is_clear_only_when_shown_below_it() -> None:
    """At an effect of exactly the threshold half the estimates fall short of it; the card
    used to call every such significant row CLEAR (about half the cards: issue 29)."""
    v = stats.verdict
    assert v(0.001, 0.045, (0.02, 0.07), 0.03, 0.05, 0.05) == "UNDERPOWERED"
    assert v(0.001, 0.045, (None, None), 0.03, 0.05, 0.05) == "UNDERPOWERED"
    assert v(0.001, 0.030, (0.02, 0.04), 0.03, 0.05, 0.05) == "CLEAR"
    assert v(0.200, 0.045, (-0.01, 0.10), 0.03, 0.05, 0.05) == "CLEAR"  # not significant: the
    # MDE's power is the promise (at least 80 % of effects of the threshold are significant)


def test_default_thresholds_are_the_documented_ones() -> None:
    t = load_thresholds()
    assert t.origin == "builtin thresholds_v4.toml"
    assert t.values.model_dump() == {
        "version": 4, "fdr": 0.05, "alpha": 0.05, "power": 0.8, "cue_effect": 0.05,
        "position_effect": 0.05, "max_flip_rate": 0.05, "sensitivity_effect": 0.2,
        "pressure_effect": 0.1, "max_wording_flip": 0.1, "alt_test_epsilon": None,
    }  # fmt: skip


def test_thresholds_file_errors_are_one_line(tmp_path: Path) -> None:
    good = (Path(stats.__file__).parent / "thresholds_v1.toml").read_text()
    cases = {
        "missing.toml": None,
        "partial.toml": "version = 1\nfdr = 0.05\n",
        "range.toml": good.replace("fdr = 0.05", "fdr = 1.5"),
        "version.toml": good.replace("version = 1", "version = 2"),  # v2 needs its key
        "future.toml": good.replace("version = 1", "version = 3"),
        "broken.toml": "version = [",
    }
    for name, text in cases.items():
        path = tmp_path / name
        if text is not None:
            path.write_text(text)
        with pytest.raises(JudgeprobeError) as err:
            load_thresholds(path)
        assert "\n" not in str(err.value)
        assert name in str(err.value)
    custom = tmp_path / "strict.toml"
    custom.write_text(good.replace("cue_effect = 0.05", "cue_effect = 0.02"))
    assert load_thresholds(custom).values.cue_effect == 0.02
