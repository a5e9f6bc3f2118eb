"""The self-test's pointwise judge (``selftest --own --score``): a planted score shift, recovered.

The simulated judge scores one answer at a time by its own prompt (bundled,
``own_score_prompt.txt``, MT-Bench's single-answer style) and replies with an explanation and a
final "Rating: [[k]]". Its score is a draw fixed by the question and the answer's opening, 3 to
7 (so a padding that keeps the opening changes nothing), plus ``score_shift`` points when the
answer wears ``favoured_label``, kept within 1–10. So under True and Flip (the LLM-labelled
answer is the cue's target) the target's score moves by exactly ``score_shift`` against Blind,
under Placebo and Verbosity by 0.

The check replays the judge on every planned judgment (``plan.cue_jobs``, no server) and
asks the pipeline for exactly what it must give: every judgment's two scores and derived
verdict, each cue condition's score shift in the metrics table and on the card (with an
interval that holds it), its LDS, and no position row (the order never reaches the judge).
"""

from __future__ import annotations

import re
from importlib import resources

import polars as pl

from judgeprobe.card.record import CueRow, PositionRow
from judgeprobe.card.rows import Card
from judgeprobe.conditions import BLIND, Condition
from judgeprobe.core.estimate import value_of
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.stream import cue_jobs, protocols_for
from judgeprobe.metrics.estimates import estimates_table
from judgeprobe.metrics.lookup import MetricsTable
from judgeprobe.protocols.pointwise import derived
from judgeprobe.selftest.check import KEY, TOLERANCE, TWIN, Line, job_key, target_label
from judgeprobe.selftest.simulator import Biases, draw, opening

SCORE_PROMPT = "own_score_prompt.txt"
#: The ``--own --score`` judge's score: MT-Bench's "Rating: [[k]]" on 1–10, the last counting.
SCORE_FORMAT = r"""{ pattern = 'Rating: \[\[(\d+)\]\]', min = 1, max = 10 }"""
LOW, HIGH = 1, 10
_INLINE_LABEL = re.compile(r"\(label = ([^\n]*)\)\n")
CANDIDATE = {"[1,2]": "A", "[2,1]": "B", "Tie": "Tie"}


def score_prompt_text() -> str:
    """The bundled pointwise prompt (``judgeprobe/selftest/own_score_prompt.txt``)."""
    return resources.files(__package__).joinpath(SCORE_PROMPT).read_text("utf-8")


Grades = tuple[tuple[str, float], ...]
"""A graded judge's categories, ascending by value (``selftest.formats.GRADES``); () for 1-10."""


def planted_score(
    context: str, response: str, label: str, biases: Biases, grades: Grades = ()
) -> float:
    """The simulated judge's score of one answer shown with ``label``.

    A graded judge (``grades``) draws one of its two lower grades and moves ``score_shift``
    up the scale for the favoured label, to the nearest grade within the scale.
    """
    seen = draw(" ".join(context.split()), opening(response), "score")
    shift = biases.score_shift if label == biases.favoured_label else 0.0
    if grades:
        values = [v for _, v in grades]
        value = values[int(2 * seen)] + shift
        return min(values, key=lambda v: abs(v - value))
    base = 3 + int(5 * seen)
    return int(min(HIGH, max(LOW, round(base + shift))))


def score_reply(
    context: str, response: str, label: str, biases: Biases, grades: Grades = ()
) -> str:
    """The reply: a short explanation, then the score (or grade) in the prompt's format."""
    score = planted_score(context, response, label, biases, grades)
    stated = (
        f"GRADE: {next(g for g, v in grades if v == score)}"
        if grades
        else f"Rating: [[{int(score)}]]"
    )
    return f"The answer states the decision and the vote count.\n\n{stated}"


def grades_of(cfg: SweepConfig) -> Grades:
    """The graded categories of the sweep's pointwise judge, ascending; () for a rating."""
    fmt = cfg.judges[0].score
    if fmt is None or fmt.map is None:
        return ()
    return tuple(sorted(fmt.map.items(), key=lambda kv: kv[1]))


def read_score_request(values: dict[str, str]) -> tuple[str, str, str]:
    """Context, response and label of a pointwise request, from its prompt's filled values.

    A prompt with no ``{LABEL}`` shows the label above the response (``(label = …)``).
    """
    response, label = values.get("RESPONSE") or "", values.get("LABEL") or ""
    if "LABEL" not in values and (inline := _INLINE_LABEL.match(response)):
        label, response = inline.group(1), response[inline.end() :]
    return values.get("CONTEXT") or "", response, label


def score_oracle(
    cfg: SweepConfig, items: list[Item], conditions: dict[str, Condition], biases: Biases
) -> pl.DataFrame:
    """Every planned judgment with the scores the simulated judge gives and their verdict."""
    rows = []
    grades = grades_of(cfg)
    jobs = cue_jobs(cfg, protocols_for(cfg), items, conditions, {j.name: "o" for j in cfg.judges})
    for job in jobs:
        p = job.presentation
        s1 = planted_score(p.document, p.text_1, p.label_1, biases, grades)
        s2 = planted_score(p.document, p.text_2, p.label_2, biases, grades)
        swap = job.order == "21"
        rows.append(
            job_key(job)
            | {
                "expected_1": float(s2 if swap else s1),  # candidate terms
                "expected_2": float(s1 if swap else s2),
                "expected_verdict": CANDIDATE[derived(s2, s1) if swap else derived(s1, s2)],
                "target_label": target_label(job),
            }
        )
    return pl.DataFrame(rows)


def _shifts(m: pl.DataFrame, biases: Biases) -> pl.DataFrame:
    """Per cue condition (targets A or B): the planted shift, the oracle's, and its LDS.

    Planted: ``score_shift`` on the pairs whose target wears the favoured label (Blind shows
    none), 0 on the others.
    """
    key = TWIN
    blind = m.filter(pl.col("condition") == BLIND).select(
        *key, b1="expected_1", b2="expected_2", bv="expected_verdict"
    )
    target = pl.col("target")
    now = pl.when(target == "A").then(pl.col("expected_1")).otherwise(pl.col("expected_2"))
    before = pl.when(target == "A").then(pl.col("b1")).otherwise(pl.col("b2"))
    probes = m.filter((pl.col("condition") != BLIND) & target.is_in(["A", "B"]))
    verdict = pl.col("expected_verdict")
    return (
        probes.join(blind, on=key, how="inner")
        .group_by("judge", "protocol", "condition")
        .agg(
            shift=(now - before).mean(),
            planted=(pl.col("target_label") == biases.favoured_label).mean() * biases.score_shift,
            pairs=pl.len(),
            lds=((verdict == target) & (pl.col("bv") != target)).mean(),
        )
    )


def score_lines(
    judgments: pl.DataFrame,
    oracle: pl.DataFrame,
    tidy: pl.DataFrame,
    card: Card,
    biases: Biases,
    grades: Grades = (),
) -> list[Line]:
    """Every check of the pointwise self-test, one line each.

    A planted shift that would take a score off the scale (beyond −2 or +3 on the 3–7 draws; a
    graded judge's beyond its top grade, or off its grid) is clipped there; the table must then
    equal the oracle's clipped shift, not the planted one.
    """
    key = KEY
    m = judgments.join(oracle, on=key, how="left")
    same = (
        (pl.col("verdict") == pl.col("expected_verdict"))
        & (pl.col("score_1") == pl.col("expected_1"))
        & (pl.col("score_2") == pl.col("expected_2"))
    )
    agree = int(m.select(same.fill_null(value=False).sum()).item())
    lines = [
        Line("judgments", "all", None, agree, m.height, agree == m.height,
             f"{agree} of {m.height} with the simulated judge's two scores and derived verdict"),
    ]  # fmt: skip
    estimates = estimates_table(judgments)
    table = MetricsTable(tidy)
    on_scale = -2 <= biases.score_shift <= 3
    if grades:  # the shift must land on a grade from both of the two lower ones
        values = [v for _, v in grades]
        on_scale = all(v + biases.score_shift in values for v in values[:2])
    for r in _shifts(m, biases).sort("condition").iter_rows(named=True):
        cell = (r["judge"], r["protocol"], r["condition"])
        planted = r["planted"]
        got = table.get(cell, "score_shift")
        row = card.find(*cell)
        on_card = value_of(row.score_shift) if isinstance(row, CueRow) else None
        lds = estimates.filter(
            (pl.col("judge") == cell[0]) & (pl.col("protocol") == cell[1])
            & (pl.col("condition") == cell[2])
        )["LDS"]  # fmt: skip
        value, lo, hi = got.interval
        exact = shift_recovered(
            (value, lo, hi), r["shift"], planted, on_card, lds, r["lds"], on_scale=on_scale
        )
        detail = (
            f"{cell[2]}: planted {planted:+.3f} points, table {_num(value)} [{_num(lo)}, "
            f"{_num(hi)}], card {_num(on_card)}, oracle {r['shift']:+.3f} over {r['pairs']} "
            f"pairs; LDS {_num(lds[0] if lds.len() else None)} (oracle {r['lds']:.3f})"
        )
        lines.append(Line("score shift", cell[1], None, int(exact), 1, exact, detail))
    positions = len(card.of_type(PositionRow))
    lines.append(
        Line("position", "own", None, int(positions == 0), 1, positions == 0,
             "not applicable: each answer is scored alone, so the card has no position row")
    )  # fmt: skip
    return lines


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:+.3f}"


def shift_recovered(
    found: tuple[float | None, float | None, float | None],
    oracle: float,
    planted: float,
    on_card: float | None,
    lds: pl.Series,
    oracle_lds: float,
    *,
    on_scale: bool,
) -> bool:
    """Whether a planted shift (score or probability) is recovered exactly.

    The table's value and the card's are the oracle's, its interval holds it, the oracle is the
    planted one unless the scale clipped it (``on_scale``), and the cell's LDS is the oracle's.
    """
    value, lo, hi = found
    return (
        value is not None and abs(value - oracle) <= TOLERANCE
        and (abs(oracle - planted) <= TOLERANCE or not on_scale)
        and on_card is not None and abs(on_card - value) <= TOLERANCE
        and lo is not None and hi is not None and lo <= oracle <= hi
        and lds.len() == 1 and abs((lds[0] or 0.0) - oracle_lds) <= TOLERANCE
    )  # fmt: skip
