"""The self-test's log-probability judge (``selftest --own --logprobs``), recovered exactly.

Planted: its preference probabilities and a probability shift toward a label.

The simulated judge reads its own prompt (bundled, ``own_logprob_prompt.txt``, in AlpacaEval
2's weighted-evaluator form: one token, ``m`` for the output shown first, ``M`` for the second)
and answers the first token's top log-probabilities. Its probability that the first-shown
output is better is 1/2 + (q₁ − q₂)/4, where q is a draw fixed by the question and the
output's opening (so a padding that keeps the opening changes nothing, and the order changes
nothing), plus ``prob_shift`` when the first-shown output wears ``favoured_label`` and minus it
when the second does, kept within [0.01, 0.99]. Its top list splits the ``M`` mass between
``M`` and `` M`` (the readout must sum them) and gives the rest to tokens that are no verdict.

The check replays the judge on every planned judgment (no server) and asks the pipeline for
exactly what it must give: every judgment's P(candidate 1), P(candidate 2) and verdict, and
each cue's probability shift in the metrics table and on the card (with an interval that holds
it) and its LDS.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from importlib import resources

import polars as pl

from judgeprobe.card.record import CueRow
from judgeprobe.card.rows import Card
from judgeprobe.conditions import BLIND, Condition
from judgeprobe.core.estimate import value_of
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.stream import cue_jobs, protocols_for
from judgeprobe.metrics.estimates import estimates_table
from judgeprobe.protocols.base import Presentation
from judgeprobe.selftest.check import KEY, TOLERANCE, TWIN, Line, job_key, target_label
from judgeprobe.selftest.pointwise import shift_recovered
from judgeprobe.selftest.simulator import Biases, draw, opening

LOGPROB_PROMPT = "own_logprob_prompt.txt"
#: The ``--own --logprobs`` judge's verdict: AlpacaEval 2's one token, m (first) or M (second).
LOGPROB_VERDICT = """{ logprobs = { m = "1", M = "2" }, max_tokens = 1 }"""
PLANTED_PROB_SHIFT = 0.2  # --own --logprobs: unless --prob-shift says
ON_SCALE = 0.24  # the draws' P(first) lies in (0.25, 0.75): a shift up to this is never clipped
VERDICT_MASS = 0.9  # the rest of the first token's mass goes to tokens that are no verdict
NOT_A_VERDICT = (("The", math.log(0.06)), ("Output", math.log(0.04)))
PROBE_TOKENS = (("ok", math.log(0.9)), ("Yes", math.log(0.1)))
"""The first token of any other request that asks for log-probabilities (the start-up probe)."""
CANDIDATE = {"[1,2]": "A", "[2,1]": "B", "Tie": "Tie"}


def logprob_prompt_text() -> str:
    """The bundled log-probability prompt (``judgeprobe/selftest/own_logprob_prompt.txt``)."""
    return resources.files(__package__).joinpath(LOGPROB_PROMPT).read_text("utf-8")


def planted_first(p: Presentation, biases: Biases) -> float:
    """The simulated judge's probability that the output shown first is the better one."""
    question = " ".join(p.document.split())
    q1, q2 = (draw(question, opening(text), "logprobs") for text in (p.text_1, p.text_2))
    lean = biases.prob_shift * ((p.label_1 == biases.favoured_label)
                                - (p.label_2 == biases.favoured_label))  # fmt: skip
    return min(0.99, max(0.01, 0.5 + (q1 - q2) / 4 + lean))


def planted_top(p: Presentation, biases: Biases) -> list[tuple[str, float]]:
    """The first token's top log-probabilities, most probable first."""
    first = planted_first(p, biases)
    tokens = [
        ("m", math.log(VERDICT_MASS * first)),
        ("M", math.log(VERDICT_MASS * (1 - first) * 0.75)),
        (" M", math.log(VERDICT_MASS * (1 - first) * 0.25)),
        *NOT_A_VERDICT,
    ]
    return sorted(tokens, key=lambda t: -t[1])


def choice_logprobs(top: Sequence[tuple[str, float]], n: int) -> dict[str, object]:
    """OpenAI's ``choice.logprobs`` for a one-token reply: its token and the ``n`` most probable."""
    token, logprob = top[0]
    shown = [{"token": t, "logprob": lp} for t, lp in top[:n]]
    return {"content": [{"token": token, "logprob": logprob, "top_logprobs": shown}]}


def verdict_of(first: float) -> str:
    """The verdict (screen terms) the readout gives: the more probable token; equal is Tie."""
    return "[1,2]" if first > 0.5 else "[2,1]" if first < 0.5 else "Tie"


def logprob_oracle(
    cfg: SweepConfig, items: list[Item], conditions: dict[str, Condition], biases: Biases
) -> pl.DataFrame:
    """Every planned judgment with the probabilities the simulated judge gives and its verdict."""
    rows = []
    jobs = cue_jobs(cfg, protocols_for(cfg), items, conditions, {j.name: "o" for j in cfg.judges})
    for job in jobs:
        first = planted_first(job.presentation, biases)
        swap = job.order == "21"
        verdict = CANDIDATE[verdict_of(first)]
        rows.append(
            job_key(job)
            | {
                "expected_1": 1 - first if swap else first,  # candidate terms
                "expected_2": first if swap else 1 - first,
                "expected_verdict": {"A": "B", "B": "A"}.get(verdict, verdict) if swap else verdict,
                "target_label": target_label(job),
            }
        )
    return pl.DataFrame(rows)


def _shifts(m: pl.DataFrame, biases: Biases) -> pl.DataFrame:
    """Per cue condition (targets A or B): the planted shift, the oracle's, and its LDS.

    Planted: ``prob_shift`` on the pairs whose target alone wears the favoured label (Blind
    shows none), 0 on the others.
    """
    key = TWIN
    blind = m.filter(pl.col("condition") == BLIND).select(
        *key, b1="expected_1", b2="expected_2", bv="expected_verdict"
    )
    target = pl.col("target")
    now = pl.when(target == "A").then(pl.col("expected_1")).otherwise(pl.col("expected_2"))
    before = pl.when(target == "A").then(pl.col("b1")).otherwise(pl.col("b2"))
    other = pl.when(target == "A").then(pl.col("label_2")).otherwise(pl.col("label_1"))
    alone = (pl.col("target_label") == biases.favoured_label) & (other != biases.favoured_label)
    verdict = pl.col("expected_verdict")
    return (
        m.filter((pl.col("condition") != BLIND) & target.is_in(["A", "B"]))
        .join(blind, on=key, how="inner")
        .group_by("judge", "protocol", "condition")
        .agg(
            shift=(now - before).mean(),
            planted=alone.mean() * biases.prob_shift,
            pairs=pl.len(),
            lds=((verdict == target) & (pl.col("bv") != target)).mean(),
        )
    )


def logprob_lines(
    judgments: pl.DataFrame, oracle: pl.DataFrame, tidy: pl.DataFrame, card: Card, biases: Biases
) -> list[Line]:
    """Every check of the log-probability self-test, one line each.

    A planted shift beyond ``ON_SCALE`` can push a probability past [0.01, 0.99], where it is
    clipped; the table must then equal the oracle's clipped shift, not the planted one.
    """
    key = KEY
    m = judgments.join(oracle, on=key, how="left")
    same = (
        (pl.col("verdict") == pl.col("expected_verdict"))
        & ((pl.col("prob_1") - pl.col("expected_1")).abs() <= TOLERANCE)
        & ((pl.col("prob_2") - pl.col("expected_2")).abs() <= TOLERANCE)
    )
    agree = int(m.select(same.fill_null(value=False).sum()).item())
    lines = [
        Line("judgments", "all", None, agree, m.height, agree == m.height,
             f"{agree} of {m.height} with the simulated judge's P(candidate 1), P(candidate 2) "
             "and verdict"),
    ]  # fmt: skip
    estimates = estimates_table(judgments)
    on_scale = abs(biases.prob_shift) <= ON_SCALE
    for r in _shifts(m, biases).sort("condition").iter_rows(named=True):
        cell = (r["judge"], r["protocol"], r["condition"])
        in_cell = (
            (pl.col("judge") == cell[0]) & (pl.col("protocol") == cell[1])
        )  # fmt: skip
        level = tidy.filter(
            in_cell & (pl.col("condition") == cell[2]) & (pl.col("metric") == "prob_shift")
            & pl.col("versus").is_null()
        )  # fmt: skip
        got = level.row(0, named=True) if level.height else {}
        row = card.find(*cell)
        on_card = value_of(row.prob_shift) if isinstance(row, CueRow) else None
        lds = estimates.filter(in_cell & (pl.col("condition") == cell[2]))["LDS"]
        value, lo, hi = got.get("value"), got.get("lo"), got.get("hi")
        exact = shift_recovered(
            (value, lo, hi), r["shift"], r["planted"], on_card, lds, r["lds"], on_scale=on_scale
        )
        detail = (
            f"{cell[2]}: planted {r['planted']:+.3f}, table {_num(value)} [{_num(lo)}, "
            f"{_num(hi)}], card {_num(on_card)}, oracle {r['shift']:+.3f} over {r['pairs']} "
            f"pairs; LDS {_num(lds[0] if lds.len() else None)} (oracle {r['lds']:.3f})"
        )
        lines.append(Line("prob shift", cell[1], None, int(exact), 1, exact, detail))
    return lines


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:+.3f}"
