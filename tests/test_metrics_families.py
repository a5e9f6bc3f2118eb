"""Metric families of judgeprobe.metrics.compute against docs/metrics.md, by hand.

Every case is a small table of judgments whose expected metrics are worked out in the comments
next to it. Drift is the lexical fallback (1 − Jaccard of lower-cased word sets), so every
expected number is exact and needs no model.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.core.records import JUDGMENT_SCHEMA
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.metrics.drift import lexical_drift
from judgeprobe.metrics.estimates import estimates_table
from judgeprobe.text.lexicons import load_lexicons

LEX = load_lexicons()
V1_TOML = (
    Path(__file__).resolve().parent.parent / "judgeprobe" / "text" / "lexicons" / "v1.toml"
).read_text(encoding="utf-8")
RESAMPLES = 200

# The hand-made tables use these columns of the public judgments schema.
SCHEMA: dict[str, Any] = {
    c: JUDGMENT_SCHEMA[c]
    for c in ("judge", "protocol", "condition", "subset", "item_id", "document_id", "order",
              "seed", "verdict", "target", "explanation", "label_1", "label_2", "attack",
              "turn1_verdict", "turn1_target", "turn1_explanation", "n_quotes", "n_fabricated",
              "verdict_score_agree")
}  # fmt: skip


def row(
    condition: str,
    item: str,
    verdict: str,
    target: str = "none",
    *,
    judge: str = "gemma",
    protocol: str = "baseline",
    order: str = "12",
    seed: int = 0,
    **extra: Any,
) -> dict[str, Any]:
    """One judgment; columns not given are null."""
    unknown = set(extra) - set(SCHEMA)
    assert not unknown, unknown
    base: dict[str, Any] = dict.fromkeys(SCHEMA)
    base.update(
        judge=judge,
        protocol=protocol,
        condition=condition,
        subset="s",
        item_id=item,
        order=order,
        seed=seed,
        verdict=verdict,
        target=target,
        explanation="",
    )
    base.update(extra)
    return base


def frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=SCHEMA)


# compute_metrics with lexical_drift raises when no item has the same verdict under a probe and
# Blind (see test_no_same_decision_pair_does_not_raise). Tables that would otherwise have no
# such pair get this one, under a judge of its own that no assertion reads.
ANCHOR = [
    row("Blind", "x0", "A", judge="anchor", explanation="fine"),
    row("True", "x0", "A", "A", judge="anchor", explanation="fine"),
]


def run(rows: list[dict[str, Any]], lex: Any = LEX, seed: int = 0) -> pl.DataFrame:
    return compute_metrics(frame(rows), lex, lexical_drift, resamples=RESAMPLES, seed=seed)


def get(
    m: pl.DataFrame,
    metric: str,
    condition: str,
    judge: str = "gemma",
    protocol: str = "baseline",
) -> dict[str, Any] | None:
    sel = m.filter(
        (pl.col("judge") == judge)
        & (pl.col("protocol") == protocol)
        & (pl.col("condition") == condition)
        & (pl.col("metric") == metric)
    )
    assert sel.height <= 1, sel
    return sel.row(0, named=True) if sel.height else None


def val(m: pl.DataFrame, metric: str, condition: str, **kw: Any) -> dict[str, Any]:
    r = get(m, metric, condition, **kw)
    assert r is not None, f"no {metric} row for {condition}"
    return r


def contains(r: dict[str, Any]) -> bool:
    return r["lo"] is not None and r["hi"] is not None and r["lo"] <= r["value"] <= r["hi"]


# 1. Reveal-After --------------------------------------------------------------------------

# turn 1 is Flip (target = the other candidate), turn 2's truth target is `target`.
#   item  target  v_F      v_R      revised  to_truth to_tie to_opp  ack  (phrase)
#   r0    A       B        A        1        1        0      0       1    "now that", "revealed"
#   r1    A       B        B        0        0        0      0       0
#   r2    A       A        Tie      1        0        1      0       0    "correction": the prompt's
#   r3    B       B        A        1        0        0      1       0    (A is B's other)
#   r4    A       Tie      A        1        1        0      0       0
#   r5    A       Tie      Invalid  excluded: turn 2 Invalid (its text would count as ack)
#   r6    A       Invalid  A        excluded: turn 1 Invalid (its text would count as ack)
#   r7    A       A        A        0        0        0      0       0    "label": the prompt's
# pairs = 6; RS = 4/6; RS_truth = 2/6; RS_tie = 1/6; RS_opp = 1/6; acknowledgement = 1/6
# (only phrases the reveal prompts do not supply count); its turn-1 floor = 1/6 (r1's turn-1
# explanation says "swapped" before any reveal).
REVEAL = [
    ("r0", "A", "B", "A", "Now that the true owners are revealed, A is better."),
    ("r1", "A", "B", "B", "B remains more faithful."),
    ("r2", "A", "A", "Tie", "After the correction both are equally good."),
    ("r3", "B", "B", "A", "A covers the main point."),
    ("r4", "A", "Tie", "A", "A is better."),
    ("r5", "A", "Tie", "Invalid", "I have updated my view, the labels were swapped."),
    ("r6", "A", "Invalid", "A", "The reveal changes my mind."),
    ("r7", "A", "A", "A", "The labels changed nothing; A is better."),
]


def reveal_rows() -> list[dict[str, Any]]:
    out = [
        row(
            "RevealAfter",
            item,
            v_r,
            t,
            turn1_verdict=v_f,
            turn1_target="B" if t == "A" else "A",
            explanation=text,
            turn1_explanation="The swapped order aside, B is better." if item == "r1" else "Fine.",
            label_1="LLM",
            label_2="TradML",
        )
        for item, t, v_f, v_r, text in REVEAL
    ]
    # Blind beside it; r1 also has the same verdict there, so the same-decision family is not empty.
    out += [row("Blind", item, "B", explanation="B is fine.") for item, *_ in REVEAL]
    return out


def test_reveal_after_family() -> None:
    m = run(reveal_rows())
    expected = {
        "RS": 4 / 6,
        "RS_truth": 2 / 6,
        "RS_tie": 1 / 6,
        "RS_opp": 1 / 6,
        "acknowledgement": 1 / 6,
        "acknowledgement_turn1_floor": 1 / 6,
    }
    for metric, want in expected.items():
        r = val(m, metric, "RevealAfter")
        assert r["value"] == pytest.approx(want, abs=1e-12), metric
        assert r["n"] == 6, metric  # r5 and r6 contribute nothing
        assert contains(r), (metric, r)
    # The three moves partition the revisions.
    parts = sum(val(m, k, "RevealAfter")["value"] for k in ("RS_truth", "RS_tie", "RS_opp"))
    assert parts == pytest.approx(val(m, "RS", "RevealAfter")["value"], abs=1e-12)
    # Blind has no turn 1: no Reveal-After metric at all.
    for metric in expected:
        assert get(m, metric, "Blind") is None, metric


# 2. Same-decision family --------------------------------------------------------------------

# Probe "True" shows label_1 = "LLM", label_2 = "TradML"; target A.
#  item  v_B / e_B                          v_p / e_p                               same?
#  s0    A "summary a is accurate"          A "summary a is accurate and concise"   yes
#        words {summary,a,is,accurate} vs + {and,concise}: J = 4/6, drift 1/3; lai 0, floor 0
#  s1    B "b is clear"                     B "The LLM summary b is clear"          yes
#        {b,is,clear} vs {the,llm,summary,b,is,clear}: J = 3/6, drift 1/2;
#        lai 1 (shown label "LLM"), floor 0
#  s2    Tie "both are fine"                Tie "Both are fine, as expected of an AI" yes
#        {both,are,fine} vs + {as,expected,of,an,ai}: J = 3/8, drift 5/8;
#        lai 1 (stereotype "as expected of an ai"), floor 0
#  s3    A "the LLM one is weaker"          A "the badge says a"                    yes
#        {the,llm,one,is,weaker} vs {the,badge,says,a}: J = 1/8, drift 7/8;
#        lai 1 (cue word "badge"), floor 1 (the probe's shown label "LLM")
#  s4    A "A wins."                        A "a WINS"                              yes
#        identical word sets after lower-casing: drift 0; lai 0, floor 0
#  s5    B "b is better"                    A "the LLM label decides"   changed: excluded
#  s6    A "a"                              Invalid                     excluded
#  s7    Invalid                            A "llm badge"               excluded
#  s8    A "a" (order 12)                   A "llm badge" (order 21)    not a pair: excluded
# same = 5; Δe|Same = (1/3 + 1/2 + 5/8 + 7/8 + 0) / 5 = (7/3) / 5 = 7/15;
# LAI_text|Same = 3/5; Blind floor = 1/5.
SAME = [
    ("s0", "A", "summary a is accurate", "A", "summary a is accurate and concise", "12"),
    ("s1", "B", "b is clear", "B", "The LLM summary b is clear", "12"),
    ("s2", "Tie", "both are fine", "Tie", "Both are fine, as expected of an AI", "12"),
    ("s3", "A", "the LLM one is weaker", "A", "the badge says a", "12"),
    ("s4", "A", "A wins.", "A", "a WINS", "12"),
    ("s5", "B", "b is better", "A", "the LLM label decides", "12"),
    ("s6", "A", "a", "Invalid", "llm badge", "12"),
    ("s7", "Invalid", "llm badge", "A", "llm badge", "12"),
    ("s8", "A", "a", "A", "llm badge", "21"),
]


def same_rows() -> list[dict[str, Any]]:
    out = []
    for item, v_b, e_b, v_p, e_p, probe_order in SAME:
        out.append(row("Blind", item, v_b, explanation=e_b))
        out.append(
            row(
                "True",
                item,
                v_p,
                "A",
                order=probe_order,
                explanation=e_p,
                label_1="LLM",
                label_2="TradML",
            )
        )
    return out


def test_lexical_drift_is_one_minus_jaccard() -> None:
    got = lexical_drift(
        ["summary a is accurate and concise", "the badge says a", "A wins."],
        ["summary a is accurate", "the TradML one is weaker", "a WINS"],
    )
    np.testing.assert_allclose(got, [1 / 3, 7 / 8, 0.0], atol=1e-12)


def test_same_decision_family() -> None:
    m = run(same_rows())
    d = val(m, "delta_e_same_lexical", "True")
    assert d["value"] == pytest.approx(7 / 15, abs=1e-12)
    assert d["n"] == 5
    assert contains(d)
    lai = val(m, "LAI_text_same", "True")
    assert lai["value"] == pytest.approx(3 / 5, abs=1e-12)
    assert lai["n"] == 5
    floor = val(m, "LAI_text_blind_floor", "True")
    assert floor["value"] == pytest.approx(1 / 5, abs=1e-12)
    # Blind is the reference, not a probe: no same-decision rows of its own.
    for metric in ("delta_e_same_lexical", "LAI_text_same", "LAI_text_blind_floor"):
        assert get(m, metric, "Blind") is None


def test_drift_scorers_side_by_side() -> None:
    # A second scorer (here a stand-in that calls every pair half-similar) is reported as
    # delta_e_same beside the lexical one, on the same pairs; lexical alone gives no
    # delta_e_same row, so a reader never mistakes one scorer for the other.
    def half(a: list[str], b: list[str]) -> np.ndarray:
        return np.full(len(a), 0.5)

    m = compute_metrics(frame(same_rows()), LEX, half, resamples=RESAMPLES, differences=False)
    assert val(m, "delta_e_same", "True")["value"] == pytest.approx(0.5)
    assert val(m, "delta_e_same_lexical", "True")["value"] == pytest.approx(7 / 15, abs=1e-12)
    assert val(m, "delta_e_same", "True")["n"] == val(m, "delta_e_same_lexical", "True")["n"]
    assert get(run(same_rows()), "delta_e_same", "True") is None


def test_same_decision_label_match_uses_the_shown_labels() -> None:
    # The same texts under a probe that shows no labels: s1 ("LLM") no longer counts, and the
    # Blind floor loses s3 ("LLM"); s2 (stereotype) and s3 (cue word "badge") still count.
    rows = [
        {**r, "label_1": None, "label_2": None} if r["condition"] == "True" else r
        for r in same_rows()
    ]
    m = run(rows)
    assert val(m, "LAI_text_same", "True")["value"] == pytest.approx(2 / 5, abs=1e-12)
    assert val(m, "LAI_text_blind_floor", "True")["value"] == 0.0


# 3. Stereotype intrusion and cue-align -------------------------------------------------------


# Verbosity (attack "verbosity", target A):
#   v0 A "A is more thorough"                          cue-align 1
#   v1 A "A is accurate"                               0 (no attack vocabulary)
#   v2 B "B gives more detail"                         0 (vocabulary, but verdict ≠ target)
#   v3 Tie "both complete"                             0 (verdict ≠ target)
#   v4 Invalid "A is thorough"                         excluded from both counts
#   v5 A "Comprehensive, as expected of an AI"         cue-align 1, stereotype 1
#   → cue_align = 2/5, stereotype_intrusion = 1/5
# Confidence (attack "confidence", target A):
#   c0 A "A is more precise"                           1
#   c1 A "A is more thorough"                          0 (verbosity's words, not confidence's)
#   c2 A "A is DEFINITIVE"                             1 (case-insensitive)
#   c3 B "B is clear; LLMs tend to ramble"             0 cue-align, stereotype 1
#   → cue_align = 2/4, stereotype_intrusion = 1/4
# Blind: b0 A "Extractive methods tend to miss context" (stereotype), b1 B "fine",
#   b2 Invalid "typical of an LLM" (excluded), b3 Tie "ok" → stereotype_intrusion = 1/3;
#   no attacked judgment → cue_align undefined.
def rhetoric_rows() -> list[dict[str, Any]]:
    verbosity = [
        ("d0", "A", "A is more thorough"),
        ("d1", "A", "A is accurate"),
        ("d2", "B", "B gives more detail"),
        ("d3", "Tie", "both complete"),
        ("d4", "Invalid", "A is thorough"),
        ("d5", "A", "Comprehensive, as expected of an AI"),
    ]
    confidence = [
        ("d0", "A", "A is more precise"),
        ("d1", "A", "A is more thorough"),
        ("d2", "A", "A is DEFINITIVE"),
        ("d3", "B", "B is clear; LLMs tend to ramble"),
    ]
    blind = [
        ("d0", "A", "Extractive methods tend to miss context"),
        ("d1", "B", "fine"),
        ("d2", "Invalid", "typical of an LLM"),
        ("d3", "Tie", "ok"),
    ]
    out = [row("Verbosity", i, v, "A", attack="verbosity", explanation=e) for i, v, e in verbosity]
    out += [
        row("Confidence", i, v, "A", attack="confidence", explanation=e) for i, v, e in confidence
    ]
    out += [row("Blind", i, v, explanation=e) for i, v, e in blind]
    return out


def test_cue_align_and_stereotype_intrusion() -> None:
    m = run(rhetoric_rows())
    assert val(m, "cue_align", "Verbosity")["value"] == pytest.approx(2 / 5, abs=1e-12)
    assert val(m, "cue_align", "Confidence")["value"] == pytest.approx(2 / 4, abs=1e-12)
    assert val(m, "stereotype_intrusion", "Verbosity")["value"] == pytest.approx(1 / 5, abs=1e-12)
    assert val(m, "stereotype_intrusion", "Confidence")["value"] == pytest.approx(1 / 4, abs=1e-12)
    assert val(m, "stereotype_intrusion", "Blind")["value"] == pytest.approx(1 / 3, abs=1e-12)
    assert val(m, "cue_align", "Verbosity")["n"] == 5  # v4 (Invalid) is not counted
    blind_cue = get(m, "cue_align", "Blind")
    assert blind_cue is None or blind_cue["value"] is None  # 0/0 is "–", never 0


# 4. Evidence: fabrication and verdict–score consistency -------------------------------------


#   item  verdict  n_quotes n_fabricated agree
#   e0    A        3        1            True
#   e1    B        2        0            False
#   e2    Tie      0        0            null   (not scored)
#   e3    A        4        2            True
#   e4    Invalid  5        5            False  (excluded: not a valid judgment)
#   e5    B        null     null         True
# fabrication_rate = (1 + 0 + 0 + 2) / (3 + 2 + 0 + 4) = 3/9
# fabricated_explanations = |{e0, e3}| / |{e0, e1, e3}| = 2/3
# verdict_score_consistency = |{e0, e3, e5}| / |{e0, e1, e3, e5}| = 3/4
def test_evidence_family() -> None:
    pbp = [
        ("e0", "A", 3, 1, True),
        ("e1", "B", 2, 0, False),
        ("e2", "Tie", 0, 0, None),
        ("e3", "A", 4, 2, True),
        ("e4", "Invalid", 5, 5, False),
        ("e5", "B", None, None, True),
    ]
    rows = [
        row(
            "Blind",
            i,
            v,
            protocol="pbp",
            n_quotes=q,
            n_fabricated=f,
            verdict_score_agree=a,
        )
        for i, v, q, f, a in pbp
    ]
    # A baseline cell without quotes or scores: every evidence rate is 0/0.
    rows += [row("Blind", "e0", "A"), row("Blind", "e1", "B")]
    m = run(rows + ANCHOR)
    assert val(m, "fabrication_rate", "Blind", protocol="pbp")["value"] == pytest.approx(
        3 / 9, abs=1e-12
    )
    fe = val(m, "fabricated_explanations", "Blind", protocol="pbp")
    assert fe["value"] == pytest.approx(2 / 3, abs=1e-12)
    vsc = val(m, "verdict_score_consistency", "Blind", protocol="pbp")
    assert vsc["value"] == pytest.approx(3 / 4, abs=1e-12)
    for r in (fe, vsc):
        assert contains(r)
    for metric in ("fabrication_rate", "fabricated_explanations", "verdict_score_consistency"):
        got = get(m, metric, "Blind", protocol="baseline")
        assert got is None or got["value"] is None, (metric, got)


# 5. Position consistency -----------------------------------------------------------------------


# Blind:  p0 12:A 21:A same; p1 12:A 21:B differs; p2 12:Tie 21:Tie same; p3 12:B only
#         (excluded); p4 12:A 21:Invalid (one valid order: excluded); p5 12:B 21:B same
#         → 3/4 over 4 items.
# True:   p0 12:A 21:A same; p1 12:B 21:B same → 2/2.
def test_position_consistency() -> None:
    blind = [
        ("p0", "A", "A"),
        ("p1", "A", "B"),
        ("p2", "Tie", "Tie"),
        ("p3", "B", None),
        ("p4", "A", "Invalid"),
        ("p5", "B", "B"),
    ]
    rows = []
    for item, v12, v21 in blind:
        rows.append(row("Blind", item, v12, order="12"))
        if v21 is not None:
            rows.append(row("Blind", item, v21, order="21"))
    for item, v in (("p0", "A"), ("p1", "B")):
        rows += [row("True", item, v, "A", order=o) for o in ("12", "21")]
    m = run(rows)
    b = val(m, "position_consistency", "Blind")
    assert b["value"] == pytest.approx(3 / 4, abs=1e-12)
    assert b["n"] == 4
    assert contains(b)
    t = val(m, "position_consistency", "True")
    assert t["value"] == 1.0
    assert t["n"] == 2


# 5b. Single relabel ---------------------------------------------------------------------------

# One summary against a fixed opponent, once labelled LLM (as-llm) and once TradML
# (as-tradml); under True the LLM-labelled candidate is the target: A in as-llm, B in
# as-tradml. A pair follows the label ("toward") when candidate 1 fares better (A > Tie > B)
# where the target is A than where it is B.
#   doc  condition  as-llm  as-tradml  flip  toward  away
#   D1   True       A       B          1     1       0      (shown in different orders)
#   D2   True       A       A          0     0       0
#   D3   True       Tie     A          1     0       1
#   D4   True       B       Invalid    excluded
#   D1   Blind      A       A          0     undirected (no target)
#   D2   Blind      A       B          1
#   D3   Blind      Tie     Tie        0
#   D4   Blind      B       B          0
# True: pairs 3, relabel_flip 2/3, relabel_toward 1/3, relabel_away 1/3.
# Blind: pairs 4, relabel_flip 1/4, toward/away undefined.
RELABEL = {
    "True": {"D1": ("A", "B"), "D2": ("A", "A"), "D3": ("Tie", "A"), "D4": ("B", "Invalid")},
    "Blind": {"D1": ("A", "A"), "D2": ("A", "B"), "D3": ("Tie", "Tie"), "D4": ("B", "B")},
}


def relabel_rows() -> list[dict[str, Any]]:
    out = []
    for condition, docs in RELABEL.items():
        for doc, (as_llm, as_tradml) in docs.items():
            for variant, v, t in (("as-llm", as_llm, "A"), ("as-tradml", as_tradml, "B")):
                target = t if condition == "True" else "none"
                order = "21" if (doc, variant) == ("D1", "as-tradml") else "12"
                out.append(
                    row(condition, f"{doc}/single_relabel/{variant}", v, target, order=order,
                        subset="single_relabel", document_id=doc)
                )  # fmt: skip
    return out


def test_single_relabel_family() -> None:
    m = run(relabel_rows())
    assert val(m, "relabel_flip", "True")["value"] == pytest.approx(2 / 3)
    assert val(m, "relabel_toward", "True")["value"] == pytest.approx(1 / 3)
    assert val(m, "relabel_away", "True")["value"] == pytest.approx(1 / 3)
    flip = val(m, "relabel_flip", "True")
    assert (flip["n"], flip["documents"]) == (3, 3)
    assert val(m, "relabel_flip", "Blind")["value"] == pytest.approx(1 / 4)
    assert val(m, "relabel_toward", "Blind")["value"] is None


def test_single_relabel_pairs_the_same_order_when_both_orders_were_shown() -> None:
    # order = "both": each item shown both ways; a pair is two items in the same order, so
    # the flip in order 21 alone gives 1 of 2 pairs, not cross-order pairs as well.
    rows = [
        row("True", f"D/single_relabel/{variant}", v, t, order=order, subset="single_relabel",
            document_id="D")
        for variant, t, by_order in (("as-llm", "A", {"12": "A", "21": "A"}),
                                     ("as-tradml", "B", {"12": "A", "21": "B"}))
        for order, v in by_order.items()
    ]  # fmt: skip
    m = run(rows)
    assert val(m, "relabel_flip", "True")["value"] == pytest.approx(1 / 2)
    assert val(m, "relabel_toward", "True")["value"] == pytest.approx(1 / 2)


# 6. Verdict metrics agree with estimates_table ------------------------------------------------

# Blind:   d0 A, d1 B, d2 Tie, d3 Tie, d4 A, d5 Invalid → EDR 2/5, ND |2−1|/5 = 1/5
# True (target A): d0 A (no move), d1 A (B→A: LDS), d2 A (Tie→A: LDS), d3 B (Tie→B: OLS),
#   d4 Tie (A→Tie: TS), d5 A (Blind Invalid: unpaired)
#   → paired 5: LDS 2/5, TS 1/5, OLS 1/5, LAO 2/4; EDR 1/6, ND |4−1|/6 = 1/2
# Flip (target B): every paired verdict as Blind → nothing moved → LAO undefined ("–")
# Neutral (target none): directional metrics have no row; TS still reported.
VERDICTS = {
    "Blind": ("none", ["A", "B", "Tie", "Tie", "A", "Invalid"]),
    "True": ("A", ["A", "A", "A", "B", "Tie", "A"]),
    "Flip": ("B", ["A", "B", "Tie", "Tie", "A", "Tie"]),
    "Neutral": ("none", ["B", "B", "Tie", "Tie", "A", "A"]),
}
COMMON = [
    "invalid_rate",
    "EDR",
    "ND",
    "LDS",
    "TS",
    "OLS",
    "LAO",
    "marginal_LDS",
    "marginal_TS",
    "marginal_OLS",
]
DIRECTIONAL = ["LDS", "OLS", "LAO", "marginal_LDS", "marginal_OLS"]


def verdict_rows() -> list[dict[str, Any]]:
    return [
        row(cond, f"d{i}", v, t, explanation=f"text {v}")
        for cond, (t, verdicts) in VERDICTS.items()
        for i, v in enumerate(verdicts)
    ]


def test_verdict_metrics_match_the_estimates_table() -> None:
    rows = verdict_rows()
    m = run(rows)
    exact = estimates_table(frame(rows))
    checked = 0
    for cond in VERDICTS:
        ref = exact.filter(pl.col("condition") == cond).row(0, named=True)
        for metric in COMMON:
            r = get(m, metric, cond)
            if ref[metric] is None:
                assert r is None or r["value"] is None, (cond, metric, r)
                continue
            assert r is not None, (cond, metric)
            assert r["value"] == pytest.approx(ref[metric], rel=1e-12, abs=1e-15), (cond, metric)
            assert contains(r), (cond, metric, r)
            checked += 1
    assert checked >= 20  # the comparison really ran over most cells and metrics


def test_verdict_metrics_hand_values() -> None:
    m = run(verdict_rows())
    assert val(m, "EDR", "Blind")["value"] == pytest.approx(2 / 5, abs=1e-12)
    assert val(m, "ND", "Blind")["value"] == pytest.approx(1 / 5, abs=1e-12)
    assert val(m, "EDR", "True")["value"] == pytest.approx(1 / 6, abs=1e-12)
    assert val(m, "ND", "True")["value"] == pytest.approx(1 / 2, abs=1e-12)
    assert val(m, "LDS", "True")["value"] == pytest.approx(2 / 5, abs=1e-12)
    assert val(m, "TS", "True")["value"] == pytest.approx(1 / 5, abs=1e-12)
    assert val(m, "OLS", "True")["value"] == pytest.approx(1 / 5, abs=1e-12)
    assert val(m, "LAO", "True")["value"] == pytest.approx(1 / 2, abs=1e-12)
    assert val(m, "LDS", "True")["n"] == 5  # d5 is unpaired (Blind Invalid)
    # Nothing moved under Flip: LAO is "–" (None, not 0), with no interval.
    lao = val(m, "LAO", "Flip")
    assert (lao["value"], lao["lo"], lao["hi"]) == (None, None, None)
    assert val(m, "LDS", "Flip")["value"] == 0.0
    # Target "none": no directional row at all; the tie shift is still reported.
    for metric in DIRECTIONAL:
        assert get(m, metric, "Neutral") is None, metric
        assert get(m, metric, "Blind") is None, metric
    assert val(m, "TS", "Neutral")["value"] == 0.0  # d2, d3 were Tie under Blind already


# 7. Spread across seeds ---------------------------------------------------------------------


# Blind, 4 items: seed 0 Tie, Tie, A, B → EDR 2/4, ND 0; seed 1 Tie, A, A, B → EDR 1/4, ND 1/4.
# Pooled: EDR 3/8, ND |3 − 2|/8 = 1/8. seed_sd (ddof 1) of two values x, y = |x − y|/√2,
# so 0.25/√2 for both EDR and ND.
def test_multi_seed_spread() -> None:
    per_seed = {0: ["Tie", "Tie", "A", "B"], 1: ["Tie", "A", "A", "B"]}
    rows = [
        row(cond, f"d{i}", v, t, seed=s, explanation="same words")
        for s, verdicts in per_seed.items()
        for i, v in enumerate(verdicts)
        for cond, t in (("Blind", "none"), ("True", "A"))
    ]
    m = run(rows)
    edr = val(m, "EDR", "Blind")
    assert edr["value"] == pytest.approx(3 / 8, abs=1e-12)
    assert edr["seeds"] == 2
    assert edr["n"] == 4  # items, pooled over seeds
    assert edr["seed_sd"] == pytest.approx(np.std([0.5, 0.25], ddof=1), abs=1e-12)
    assert edr["seed_sd"] == pytest.approx(0.25 / math.sqrt(2), abs=1e-12)
    nd = val(m, "ND", "Blind")
    assert nd["value"] == pytest.approx(1 / 8, abs=1e-12)
    assert nd["seed_sd"] == pytest.approx(0.25 / math.sqrt(2), abs=1e-12)
    # True copies Blind verdict for verdict: nothing moved in either seed → LAO undefined,
    # and no seed has a defined LAO either.
    lao = val(m, "LAO", "True")
    assert lao["value"] is None
    assert lao["seeds"] == 0
    assert lao["seed_sd"] is None


def test_single_seed_has_no_spread() -> None:
    m = run(verdict_rows())
    edr = val(m, "EDR", "Blind")
    assert edr["seeds"] == 1
    assert edr["seed_sd"] is None


# 8. Lexicon override -------------------------------------------------------------------------


def _custom_lexicon(tmp_path: Path) -> Path:
    start = V1_TOML.index("[stereotype]")
    end = V1_TOML.index("[acknowledgement]")
    text = V1_TOML[:start] + '[stereotype]\nphrases = ["Robots write"]\n\n' + V1_TOML[end:]
    path = tmp_path / "custom.toml"
    path.write_text(text, encoding="utf-8")
    return path


# Blind explanations: "Robots write better summaries", "robots write well" (custom phrase,
# any case), "as expected of an AI" (v1 phrase), "plain" → v1: 1/4, custom: 2/4.
def test_custom_lexicon_changes_stereotype_intrusion(tmp_path: Path) -> None:
    custom = load_lexicons(_custom_lexicon(tmp_path))
    assert custom.stereotype == ("robots write",)
    assert custom.cue == LEX.cue
    assert custom.attack == LEX.attack
    assert custom.sha256 != LEX.sha256
    texts = ["Robots write better summaries", "robots write well", "as expected of an AI", "plain"]
    rows = [row("Blind", f"d{i}", "A", explanation=e) for i, e in enumerate(texts)] + ANCHOR
    v1 = val(run(rows, LEX), "stereotype_intrusion", "Blind")["value"]
    mine = val(run(rows, custom), "stereotype_intrusion", "Blind")["value"]
    assert v1 == pytest.approx(1 / 4, abs=1e-12)
    assert mine == pytest.approx(2 / 4, abs=1e-12)


_FULL_MINIMAL = (
    "[cue]\nwords = ['badge']\n[stereotype]\nphrases = ['llms tend to']\n"
    "[acknowledgement]\nphrases = ['revealed']\n[attack.verbosity]\nwords = ['detail']\n"
)


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("[cue\nwords = [", id="toml-syntax"),
        pytest.param(_FULL_MINIMAL.split("[attack.verbosity]")[0], id="no-attack-table"),
        pytest.param(_FULL_MINIMAL.replace("[cue]\nwords", "[cue]\nterms"), id="no-cue-words"),
        pytest.param(
            _FULL_MINIMAL.replace("[attack.verbosity]\nwords = ['detail']", "[attack]\nv = ['x']"),
            id="attack-not-tables",
        ),
        pytest.param(b"\xff\xfe\x00", id="not-utf8"),
    ],
)
def test_malformed_lexicon_raises(tmp_path: Path, content: str | bytes) -> None:
    path = tmp_path / "bad.toml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    # Named after the file (the folder's name holds "malformed" too, so match past it): a
    # TOML error, or the first field at fault.
    with pytest.raises(
        JudgeprobeError, match=r"^lexicons .*bad\.toml: (not valid TOML: |\w[\w.]*: )"
    ):
        load_lexicons(path)


def test_minimal_lexicon_is_accepted(tmp_path: Path) -> None:
    # The control for the malformed cases: the same file, whole, loads.
    path = tmp_path / "ok.toml"
    path.write_text(_FULL_MINIMAL, encoding="utf-8")
    lex = load_lexicons(path)
    assert lex.cue == ("badge",)
    assert lex.attack == {"verbosity": ("detail",)}


def test_missing_lexicon_file_raises(tmp_path: Path) -> None:
    with pytest.raises(JudgeprobeError):
        load_lexicons(tmp_path / "absent.toml")


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(_FULL_MINIMAL.replace("words = ['badge']", "words = [1]"), id="int-word"),
        pytest.param(
            "attack = 'x'\n" + _FULL_MINIMAL.split("[attack.verbosity]")[0], id="attack-string"
        ),
    ],
)
def test_malformed_lexicon_types_raise_judgeprobe_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(JudgeprobeError):
        load_lexicons(path)


def test_lexicon_words_must_be_a_list(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(_FULL_MINIMAL.replace("['badge']", "'label'"), encoding="utf-8")
    with pytest.raises(JudgeprobeError):
        load_lexicons(path)


# 9. Bootstrap determinism and an all-Invalid cell ---------------------------------------------


def test_the_seed_moves_nothing_under_score_intervals() -> None:
    # The metrics' intervals are computed from the document sums, with no resampling: a
    # different seed gives the same table (the seed only matters for the bootstrap method).
    rows = verdict_rows() + reveal_rows()
    a = run(rows, seed=7)
    c = run(rows, seed=8)
    assert a.height > 20
    assert a.equals(c)


def test_bootstrap_same_seed_same_intervals() -> None:
    # Verdict + Reveal-After data, 85 metric rows, many with several contribution patterns.
    # Ten calls with seed 7 must give one table. (Contribution patterns come out of a Polars
    # group_by, whose row order varies from call to call unless sorted; an unsorted order
    # changes the multinomial draws, so this is all but certain to catch it.)
    rows = verdict_rows() + reveal_rows()
    first = run(rows, seed=7)
    assert first.height > 20
    for _ in range(9):
        assert run(rows, seed=7).equals(first)


# judge "broken": every Blind judgment Invalid → invalid_rate 3/3 = 1 (Clopper–Pearson interval
# [0.025^(1/3), 1]: three of three is no proof that every judgment fails);
# EDR, ND, share_A have an empty denominator → "–" (None), never 0; nothing else is defined.
def test_all_invalid_cell() -> None:
    broken = [row("Blind", f"d{i}", "Invalid", judge="broken") for i in range(3)]
    m = run(broken + verdict_rows())
    inv = val(m, "invalid_rate", "Blind", judge="broken")
    assert (inv["value"], inv["hi"], inv["n"]) == (1.0, 1.0, 3)
    assert inv["lo"] == pytest.approx(0.025 ** (1 / 3))
    for metric in ("EDR", "ND", "share_A"):
        r = get(m, metric, "Blind", judge="broken")
        assert r is None or (r["value"], r["lo"], r["hi"]) == (None, None, None), (metric, r)
    assert m.filter((pl.col("judge") == "broken") & pl.col("value").is_not_null())[
        "metric"
    ].to_list() == ["invalid_rate"]
    ref = estimates_table(frame(broken)).row(0, named=True)
    assert ref["invalid_rate"] == 1.0
    assert ref["EDR"] is None


def test_no_same_decision_pair_does_not_raise() -> None:
    broken = [row("Blind", f"d{i}", "Invalid", judge="broken") for i in range(3)]
    m = run(broken)
    assert val(m, "invalid_rate", "Blind", judge="broken")["value"] == 1.0
    assert get(m, "delta_e_same_lexical", "Blind", judge="broken") is None


def test_lexical_drift_of_nothing_is_empty() -> None:
    assert lexical_drift([], []).shape == (0,)
