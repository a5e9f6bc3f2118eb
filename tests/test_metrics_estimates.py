"""Point estimates (judgeprobe.metrics.estimates) against the definitions in docs/metrics.md.

Every case is a hand-made table of judgments whose expected metrics are worked out by hand
in the comments next to it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import polars as pl
import pytest

from judgeprobe.core.records import JUDGMENT_SCHEMA
from judgeprobe.metrics.estimates import estimates_table

# The hand-made tables use these columns of the public judgments schema.
SCHEMA = {
    c: JUDGMENT_SCHEMA[c]
    for c in ("judge", "protocol", "condition", "subset", "item_id", "order", "seed", "verdict",
              "target", "latency_s", "prompt_tokens", "completion_tokens")
}  # fmt: skip

COLUMNS = [
    "judge", "protocol", "condition", "n", "n_valid", "n_A", "n_B", "n_Tie", "invalid_rate",
    "EDR", "ND", "n_paired", "lds_count", "ts_count", "ols_count", "LDS", "TS", "OLS", "LAO",
    "marginal_LDS", "marginal_TS", "marginal_OLS", "sign_p",
]  # fmt: skip


def rows(
    condition: str,
    verdicts: Sequence[str],
    *,
    target: str | Sequence[str] = "none",
    judge: str = "gemma",
    protocol: str = "PBP",
    subset: str = "s",
    order: str = "12",
    seed: int = 0,
    items: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """One judgment per verdict; item ids d0, d1, … unless given; target per row or shared."""
    ids = list(items) if items is not None else [f"d{i}" for i in range(len(verdicts))]
    targets = [target] * len(verdicts) if isinstance(target, str) else list(target)
    assert len(ids) == len(verdicts) == len(targets)
    return [
        {
            "judge": judge,
            "protocol": protocol,
            "condition": condition,
            "subset": subset,
            "item_id": item,
            "order": order,
            "seed": seed,
            "verdict": v,
            "target": t,
            "latency_s": 1.0,
            "prompt_tokens": 100,
            "completion_tokens": 10,
        }
        for item, v, t in zip(ids, verdicts, targets, strict=True)
    ]


def table(*groups: list[dict[str, Any]]) -> pl.DataFrame:
    return estimates_table(pl.DataFrame([r for g in groups for r in g], schema=SCHEMA))


def cell(
    t: pl.DataFrame, condition: str, judge: str = "gemma", protocol: str = "PBP"
) -> dict[str, Any]:
    sel = t.filter(
        (pl.col("judge") == judge)
        & (pl.col("protocol") == protocol)
        & (pl.col("condition") == condition)
    )
    assert sel.height == 1, sel
    return sel.row(0, named=True)


def is_missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


# 1. Check values of docs/metrics.md --------------------------------------------------------

# Gemma PBP Blind: 937 Tie, 34 A, 29 B over 1000 items.
BLIND_1000 = ["Tie"] * 937 + ["A"] * 34 + ["B"] * 29
# Gemma Baseline under True (target A): 509 of the Blind ties move to A, nothing else moves.
TRUE_1000 = ["A"] * 509 + ["Tie"] * 428 + ["A"] * 34 + ["B"] * 29


def test_check_values_edr_and_nd() -> None:
    b = cell(table(rows("Blind", BLIND_1000)), "Blind")
    assert (b["n"], b["n_valid"], b["n_Tie"], b["n_A"], b["n_B"]) == (1000, 1000, 937, 34, 29)
    assert b["EDR"] == 0.937
    assert b["ND"] == pytest.approx(0.005, abs=1e-12)
    assert b["invalid_rate"] == 0.0


def test_check_values_true_cell_lds_lao() -> None:
    t = table(rows("Blind", BLIND_1000), rows("True", TRUE_1000, target="A"))
    c = cell(t, "True")
    assert c["n_paired"] == 1000
    assert (c["lds_count"], c["ts_count"], c["ols_count"]) == (509, 0, 0)
    assert c["LDS"] == 0.509
    assert c["TS"] == 0.0
    assert c["OLS"] == 0.0
    assert c["LAO"] == 1.0
    # Exact two-sided sign test, 509 LDS vs 0 OLS: 2 * 2**-509.
    assert c["sign_p"] == 2.0**-508


def test_output_has_documented_columns_and_blind_first() -> None:
    t = table(
        rows("True", ["A"], target="A"), rows("Blind", ["Tie"]), rows("Flip", ["B"], target="B")
    )
    assert set(COLUMNS) <= set(t.columns)
    assert t["condition"].to_list() == ["Blind", "Flip", "True"]


# 2. LDS + TS + OLS = share of changed verdicts ---------------------------------------------

MIX_BLIND = ["A", "A", "A", "B", "B", "B", "Tie", "Tie", "Tie", "Tie"]
MIX_PROBE = ["B", "Tie", "A", "A", "Tie", "B", "B", "A", "Tie", "B"]
# changed: d0 d1 d3 d4 d6 d7 d9 -> 7 of 10


@pytest.mark.parametrize(
    ("target", "lds", "ts", "ols"),
    [
        # target B: LDS d0 A→B, d6 Tie→B, d9 Tie→B; TS d1, d4; OLS d3 B→A, d7 Tie→A
        ("B", 3, 2, 2),
        # target A: LDS d3 B→A, d7 Tie→A; TS d1, d4; OLS d0 A→B, d6 Tie→B, d9 Tie→B
        ("A", 2, 2, 3),
    ],
)
def test_shifts_partition_changed_items(target: str, lds: int, ts: int, ols: int) -> None:
    t = table(rows("Blind", MIX_BLIND), rows("Cue", MIX_PROBE, target=target))
    c = cell(t, "Cue")
    assert c["n_paired"] == 10
    assert (c["lds_count"], c["ts_count"], c["ols_count"]) == (lds, ts, ols)
    assert c["LDS"] == pytest.approx(lds / 10, abs=1e-12)
    assert c["TS"] == pytest.approx(ts / 10, abs=1e-12)
    assert c["OLS"] == pytest.approx(ols / 10, abs=1e-12)
    changed = sum(b != p for b, p in zip(MIX_BLIND, MIX_PROBE, strict=True)) / 10
    assert changed == 0.7
    assert c["LDS"] + c["TS"] + c["OLS"] == pytest.approx(changed, abs=1e-12)
    assert c["LAO"] == pytest.approx(lds / 7, abs=1e-12)
    # sign test lds vs ols, n = 5: tail = sum C(5, i), i <= 2, = 16 -> 2 * 16/32 = 1
    assert c["sign_p"] == 1.0


# 3. No movement ----------------------------------------------------------------------------


def test_no_movement_lao_is_null_not_zero() -> None:
    verdicts = ["A", "B", "Tie", "Tie"]
    c = cell(table(rows("Blind", verdicts), rows("True", verdicts, target="A")), "True")
    assert c["n_paired"] == 4
    assert (c["LDS"], c["TS"], c["OLS"]) == (0.0, 0.0, 0.0)
    assert c["LAO"] is None
    assert c["sign_p"] is None  # 0 LDS vs 0 OLS: no trials


# 4. Invalid handling -----------------------------------------------------------------------


def test_invalid_excluded_from_rates_and_pairing() -> None:
    blind = ["A", "Tie", "Invalid", "B", "Tie"]
    # target B: d0 A→B LDS; d1 Tie→Invalid dropped; d2 Invalid→Tie dropped; d3 B→B; d4 Tie→A OLS
    probe = ["B", "Invalid", "Tie", "B", "A"]
    t = table(rows("Blind", blind), rows("Flip", probe, target="B"))
    b, p = cell(t, "Blind"), cell(t, "Flip")

    assert (b["n"], b["n_valid"], b["n_A"], b["n_B"], b["n_Tie"]) == (5, 4, 1, 1, 2)
    assert b["invalid_rate"] == pytest.approx(1 / 5, abs=1e-12)
    assert b["EDR"] == 2 / 4  # Invalid is not a Tie and not in the denominator
    assert b["ND"] == 0.0

    assert (p["n"], p["n_valid"], p["n_A"], p["n_B"], p["n_Tie"]) == (5, 4, 1, 2, 1)
    assert p["invalid_rate"] == pytest.approx(1 / 5, abs=1e-12)
    assert p["EDR"] == 1 / 4
    assert p["ND"] == 1 / 4

    assert p["n_paired"] == 3
    assert (p["lds_count"], p["ts_count"], p["ols_count"]) == (1, 0, 1)
    assert p["LDS"] == pytest.approx(1 / 3, abs=1e-12)
    assert p["TS"] == 0.0
    assert p["OLS"] == pytest.approx(1 / 3, abs=1e-12)
    assert p["LAO"] == pytest.approx(0.5, abs=1e-12)
    assert p["sign_p"] == 1.0  # 1 vs 1


def test_all_invalid_cell() -> None:
    t = table(
        rows("Blind", ["Invalid", "Invalid", "Invalid"]),
        rows("True", ["A", "Tie", "B"], target="A"),
    )
    b, p = cell(t, "Blind"), cell(t, "True")
    assert (b["n"], b["n_valid"], b["n_A"], b["n_B"], b["n_Tie"]) == (3, 0, 0, 0, 0)
    assert b["invalid_rate"] == 1.0
    # Undefined rates: the implementation gives NaN (0/0), not null.
    assert is_missing(b["EDR"])
    assert is_missing(b["ND"])
    # Nothing pairs, so every paired metric of the probe is undefined.
    assert (p["n_paired"] or 0) == 0
    for k in ("LDS", "TS", "OLS", "LAO", "sign_p", "marginal_LDS", "marginal_TS", "marginal_OLS"):
        assert p[k] is None, k
    # The probe's own Blind-behaviour rates are still computed.
    assert (p["EDR"], p["ND"]) == (1 / 3, 0.0)


def test_single_item_cell() -> None:
    t = table(rows("Blind", ["Tie"]), rows("True", ["A"], target="A"))
    b, p = cell(t, "Blind"), cell(t, "True")
    assert (b["n"], b["EDR"], b["ND"]) == (1, 1.0, 0.0)
    assert (p["n"], p["EDR"], p["ND"]) == (1, 0.0, 1.0)
    assert (p["n_paired"], p["LDS"], p["TS"], p["OLS"], p["LAO"]) == (1, 1.0, 0.0, 0.0, 1.0)
    assert p["sign_p"] == 1.0  # one trial: P(X <= 0) = 1/2, doubled


# 5. Target none on a probe -----------------------------------------------------------------


def test_probe_without_target() -> None:
    # d0 A→Tie (TS); d1 B→A and d3 A→B change but have no direction; d2 Tie→Tie
    t = table(rows("Blind", ["A", "B", "Tie", "A"]), rows("Notice", ["Tie", "A", "Tie", "B"]))
    c = cell(t, "Notice")
    assert c["n_paired"] == 4
    assert c["ts_count"] == 1
    assert c["TS"] == 0.25
    assert c["LDS"] is None
    assert c["OLS"] is None
    assert c["LAO"] is None
    assert c["sign_p"] is None
    assert c["marginal_TS"] == 2 / 4 - 1 / 4
    assert c["marginal_LDS"] is None
    assert c["marginal_OLS"] is None


# 6. Pairing key includes order and seed ----------------------------------------------------


def test_pairing_respects_order() -> None:
    t = table(
        rows("Blind", ["A"], order="12"),
        rows("Blind", ["Tie"], order="21"),
        rows("True", ["Tie"], order="21", target="A"),
    )
    c = cell(t, "True")
    # Paired with its own order only: Tie→Tie, nothing moved (a 12 pairing would be A→Tie).
    assert c["n_paired"] == 1
    assert (c["LDS"], c["TS"], c["OLS"]) == (0.0, 0.0, 0.0)
    assert c["LAO"] is None


def test_pairing_requires_same_order() -> None:
    t = table(rows("Blind", ["Tie"], order="12"), rows("True", ["A"], order="21", target="A"))
    c = cell(t, "True")
    assert (c["n_paired"] or 0) == 0
    assert c["LDS"] is None
    assert c["LAO"] is None


def test_pairing_respects_seed() -> None:
    t = table(
        rows("Blind", ["B", "Tie"], seed=0),
        rows("Blind", ["A", "A"], seed=1),
        rows("True", ["A", "A"], seed=1, target="A"),
    )
    c = cell(t, "True")
    # Seed 1 against seed 1: A→A twice. Seed 0 would give B→A, Tie→A (LDS 1).
    assert c["n_paired"] == 2
    assert c["LDS"] == 0.0
    assert c["LAO"] is None


def test_pairing_respects_subset() -> None:
    t = table(
        rows("Blind", ["B"], subset="x"),
        rows("Blind", ["Tie"], subset="y"),
        rows("True", ["A"], subset="y", target="A"),
    )
    c = cell(t, "True")
    assert (c["n_paired"], c["lds_count"], c["LDS"], c["LAO"]) == (1, 1, 1.0, 1.0)


# 7. Per-item target ------------------------------------------------------------------------


def test_target_varies_per_item() -> None:
    targets = ["A", "A", "A", "B", "B", "B"]
    blind = ["Tie", "B", "A", "Tie", "A", "B"]
    # d0 Tie→A LDS; d1 B→A LDS; d2 A→A; d3 Tie→A OLS (t=B); d4 A→B LDS; d5 B→Tie TS
    probe = ["A", "A", "A", "A", "B", "Tie"]
    c = cell(table(rows("Blind", blind), rows("label:LLM", probe, target=targets)), "label:LLM")
    assert c["n_paired"] == 6
    assert (c["lds_count"], c["ts_count"], c["ols_count"]) == (3, 1, 1)
    assert c["LDS"] == 0.5
    assert c["TS"] == pytest.approx(1 / 6, abs=1e-12)
    assert c["OLS"] == pytest.approx(1 / 6, abs=1e-12)
    assert c["LAO"] == pytest.approx(3 / 5, abs=1e-12)
    # P_p(v = t_d) = 4/6 (d0 d1 d2 d4), P_B(v = t_d) = 2/6 (d2 d5)
    assert c["marginal_LDS"] == pytest.approx(2 / 6, abs=1e-12)
    # P_p(v = opp_d) = 1/6 (d3), P_B(v = opp_d) = 2/6 (d1 d4)
    assert c["marginal_OLS"] == pytest.approx(-1 / 6, abs=1e-12)
    assert c["sign_p"] == 2 * (1 + 4) / 16  # 3 vs 1: tail C(4,0)+C(4,1)


# 8. Marginal forms -------------------------------------------------------------------------


def test_marginal_forms() -> None:
    # Blind valid 7: Tie 3, A 3, B 1.  Probe valid 6: Tie 5, A 1, B 0.
    blind = ["Tie", "Tie", "Tie", "A", "A", "A", "B", "Invalid"]
    probe = ["Tie", "Tie", "Invalid", "Tie", "Tie", "Invalid", "Tie", "A"]
    t = table(rows("Blind", blind), rows("True", probe, target="A"))
    b, c = cell(t, "Blind"), cell(t, "True")
    assert c["marginal_TS"] == pytest.approx(5 / 6 - 3 / 7, abs=1e-12)
    assert c["marginal_TS"] == pytest.approx(c["EDR"] - b["EDR"], abs=1e-12)
    assert c["marginal_LDS"] == pytest.approx(1 / 6 - 3 / 7, abs=1e-12)
    assert c["marginal_OLS"] == pytest.approx(0 / 6 - 1 / 7, abs=1e-12)


def test_marginal_forms_for_unpairable_items() -> None:
    # No shared item ids: nothing can be paired, but the marginal shares are defined.
    blind = rows("Blind", ["Tie", "A", "B", "A"], items=["d0", "d1", "d2", "d3"])
    probe = rows("True", ["Tie", "Tie", "Tie", "A"], target="A", items=["e0", "e1", "e2", "e3"])
    c = cell(table(blind, probe), "True")
    assert c["marginal_TS"] == 3 / 4 - 1 / 4
    assert c["marginal_LDS"] == 1 / 4 - 2 / 4


def test_marginal_forms_use_whole_cells() -> None:
    # d2 exists only under the probe: P_p(Tie) = 2/3, P_B(Tie) = 1/2.
    t = table(rows("Blind", ["Tie", "A"]), rows("True", ["Tie", "A", "Tie"], target="A"))
    c = cell(t, "True")
    assert c["EDR"] == pytest.approx(2 / 3, abs=1e-12)
    assert c["marginal_TS"] == pytest.approx(2 / 3 - 1 / 2, abs=1e-12)


# 9. Cells are kept apart -------------------------------------------------------------------


def test_judges_and_protocols_kept_apart() -> None:
    t = table(
        rows("Blind", ["Tie", "Tie"], judge="gemma", protocol="PBP"),
        rows("True", ["A", "A"], judge="gemma", protocol="PBP", target="A"),
        rows("Blind", ["A", "B"], judge="qwen", protocol="PBP"),
        rows("True", ["A", "B"], judge="qwen", protocol="PBP", target="A"),
        rows("Blind", ["B", "Tie"], judge="gemma", protocol="SCoT"),
        rows("True", ["B", "B"], judge="gemma", protocol="SCoT", target="A"),
    )
    assert t.height == 6
    assert t.select("judge", "protocol", "condition").rows() == [
        ("gemma", "PBP", "Blind"),
        ("gemma", "PBP", "True"),
        ("gemma", "SCoT", "Blind"),
        ("gemma", "SCoT", "True"),
        ("qwen", "PBP", "Blind"),
        ("qwen", "PBP", "True"),
    ]
    g = cell(t, "True", "gemma", "PBP")
    assert (g["n_paired"], g["LDS"], g["TS"], g["OLS"], g["LAO"]) == (2, 1.0, 0.0, 0.0, 1.0)
    q = cell(t, "True", "qwen", "PBP")
    assert (q["n_paired"], q["LDS"], q["TS"], q["OLS"], q["LAO"]) == (2, 0.0, 0.0, 0.0, None)
    s = cell(t, "True", "gemma", "SCoT")
    # d0 B→B, d1 Tie→B: OLS only
    assert (s["n_paired"], s["LDS"], s["TS"], s["OLS"], s["LAO"]) == (2, 0.0, 0.0, 0.5, 0.0)
    assert cell(t, "Blind", "gemma", "PBP")["EDR"] == 1.0
    assert cell(t, "Blind", "qwen", "PBP")["EDR"] == 0.0
    assert cell(t, "Blind", "gemma", "SCoT")["ND"] == 0.5
