"""What judge logs can show: associations in the judge's own traffic, with intervals and tests.

The definitions are docs/metrics.md, "Judge logs (observed, not intervened)": nothing was
intervened on, so each figure is *observed*. The resampling unit is the question
(``document_id``), as the document is for live runs: every interval is the metrics' score
interval over questions (``uncertainty.unit_interval``; κ alone the percentile bootstrap,
``agreement.interval``), and every exact test the sign test over questions of the
per-question net direction (McNemar's
exact test on the discordant questions, as the card's other rows).

- ``position``: items judged validly in both orders (``items.position_units``, the Blind
  position row's units): first-shown excess and consistency.
- ``position (randomized)``: where the log's tool itself shuffled the shown order (AlpacaEval)
  and the order was recovered, the first-shown win share − ½ over decisive verdicts: an
  experiment, since the order was assigned at random.
- ``length``: over decisive verdicts on pairs of unequal length, the longer-win share L, against
  the human labels' L on the labelled pairs, else against ½.
- ``self-preference``: the judge's own model's win rate (ties ½) under the judge minus under
  the reference (human labels, else the other judges in the logs) on the same items.
- ``agreement``: item verdicts against the human labels, A/B/Tie three categories, and κ.
- ``unreadable``: Invalid verdicts over verdicts.
- ``drift``: the item verdicts of two logs of the same items (same texts): the share changed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import polars as pl

from judgeprobe.core.estimate import Estimate
from judgeprobe.core.records import INVALID, TIE
from judgeprobe.metrics.agreement import interval as kappa_interval
from judgeprobe.metrics.agreement import kappa, kappa_of_table, label_pairs
from judgeprobe.metrics.uncertainty import (
    PERCENTILE,
    Linear,
    Share,
    Signed,
    contrast,
    nan_to_none,
    ratio,
    sign_test_p,
    unit_interval,
)
from judgeprobe.metrics.units import DOC, position_units

CELL = ["judge", "protocol"]
COLUMNS = ["judge", "protocol", "condition", DOC, "subset", "item_id", "generator_1",
           "generator_2", "order", "seed", "verdict", "length_1", "length_2"]  # fmt: skip
"""The judgments-table columns the observed figures read (a log run's card reads no other)."""
VALUE = {"A": 1.0, "Tie": 0.5, "B": 0.0}
"""Candidate A's value of a verdict: a win, half, a loss."""
Measure = str  # position | position-randomized | length | self-preference | agreement | …


@dataclass(frozen=True)
class Observed:
    """One observed figure of one judge and prompt: effect, interval, exact test, parts."""

    judge: str
    protocol: str
    measure: Measure
    row: str  # the card row's name
    effect_name: str
    n: int
    documents: int
    effect: Estimate  # with its 95% interval over questions
    up: int | None = None  # questions moving with the effect, against
    down: int | None = None
    p: float | None = None
    reference: str = ""  # what the effect is measured against
    parts: Mapping[str, float | int | None] = field(default_factory=dict)
    consistency: Estimate | None = None  # position: the same verdict in both orders
    kappa: Estimate | None = None  # agreement: Cohen's κ (percentile bootstrap over questions)


def _bounds(
    units: pl.DataFrame, columns: list[str], stat: Share | Linear
) -> tuple[float | None, float | None]:
    lo, hi = unit_interval(units, columns, stat, by=DOC)
    return nan_to_none(lo), nan_to_none(hi)


def question_test(units: pl.DataFrame, net: pl.Expr) -> tuple[int, int, float | None]:
    """Questions whose summed ``net`` is positive against negative, and their exact sign test."""
    per = units.group_by(DOC).agg(net.sum().alias("net"))
    up, down = int((per["net"] > 0).sum()), int((per["net"] < 0).sum())
    return up, down, sign_test_p(up, up + down)


def narrow(judgments: pl.DataFrame) -> pl.DataFrame:
    """Only ``COLUMNS``: a filter over them copies no explanation."""
    return judgments.select(c for c in COLUMNS if c in judgments.columns)


def item_verdicts(judgments: pl.DataFrame) -> pl.DataFrame:
    """Each item's judge verdict per judge and prompt, and candidate A's judge value.

    The order-consistent verdict; valid verdicts that disagree make it Tie; an Invalid verdict
    makes it Invalid. ``value_A`` = mean over the valid verdicts of 1 (A), ½ (Tie), 0 (B).
    """
    value = pl.col("verdict").replace_strict(VALUE, default=None, return_dtype=pl.Float64)
    valid = pl.col("verdict") != INVALID
    return (
        narrow(judgments)
        .lazy()
        .group_by(*CELL, "item_id")
        .agg(
            pl.col(DOC, "generator_1", "generator_2").first(),
            pl.col("length_1", "length_2").drop_nulls().first(),
            invalid=(~valid).any(),
            kinds=pl.col("verdict").filter(valid).n_unique(),
            only=pl.col("verdict").filter(valid).first(),
            value_A=value.mean(),
            n_valid=valid.sum(),
        )
        .with_columns(
            verdict=pl.when(pl.col("invalid"))
            .then(pl.lit(INVALID))
            .when(pl.col("kinds") > 1)
            .then(pl.lit("Tie"))
            .otherwise(pl.col("only"))
        )
        .drop("invalid", "kinds", "only")
        .collect()
    )


def human_labels(labels: pl.DataFrame | None) -> pl.DataFrame:
    """Each labelled item's human label: its most frequent vote; a draw between labels is Tie."""
    schema = {"item_id": pl.String, "human": pl.String, "human_A": pl.Float64}
    if labels is None or labels.is_empty():
        return pl.DataFrame(schema=schema)
    counts = labels.filter(pl.col("label").is_in(list(VALUE))).group_by("item_id", "label").len()
    top = counts.group_by("item_id").agg(
        most=pl.col("len").max(),
        label=pl.col("label").filter(pl.col("len") == pl.col("len").max()),
    )
    human = pl.when(pl.col("label").list.len() == 1).then(pl.col("label").list.first())
    return top.select("item_id", human.otherwise(pl.lit("Tie")).alias("human")).with_columns(
        human_A=pl.col("human").replace_strict(VALUE, return_dtype=pl.Float64)
    )


def position(judgments: pl.DataFrame) -> list[Observed]:
    """First-shown excess and consistency on items judged validly in both orders."""
    j = narrow(judgments).lazy().with_columns(pl.col(DOC).cast(pl.String))
    units = position_units(j).collect()
    units = units.with_columns(unit=pl.lit(1, pl.Int64))
    out = []
    for (judge, protocol), part in sorted(units.partition_by(CELL, as_dict=True).items()):
        n = part.height
        effect = (int(part["first"].sum()) - int(part["second"].sum())) / n
        lo, hi = _bounds(part, ["first", "second", "unit"], contrast(0, 1, 2))
        consistency = int(part["consistent"].sum()) / n
        c_lo, c_hi = _bounds(part, ["consistent", "unit"], ratio(0, 1))
        up, down, p = question_test(part, pl.col("first") - pl.col("second"))
        out.append(Observed(
            str(judge), str(protocol), "position", "position (observed)",
            "first − second shown", n, part[DOC].n_unique(), Estimate(value=effect, lo=lo, hi=hi),
            up, down, p, "both orders of the same item",
            {"background": 2 * int(part["second"].sum()) / n},
            consistency=Estimate(value=consistency, lo=c_lo, hi=c_hi),
        ))  # fmt: skip
    return out


def randomized_position(
    judgments: pl.DataFrame, cells: Mapping[tuple[str, str], Mapping[str, int]]
) -> list[Observed]:
    """First-shown win share − ½ where the log's tool randomized the shown order.

    ``cells``: the judge × protocol cells whose order the tool shuffled, each with how many rows
    had their order recovered (``kept``, ``switched``) or not (``undetermined``); only
    judgments with a recovered order (``order`` 12 or 21) count. The interval is the share's
    over questions, shifted by ½; the test the exact sign test over questions of first- minus
    second-shown wins.
    """
    decisive = narrow(judgments).filter(
        pl.col("order").cast(pl.String).is_in(["12", "21"]), pl.col("verdict").is_in(["A", "B"])
    )
    first = (pl.col("order").cast(pl.String) == "12") == (pl.col("verdict") == "A")
    units = decisive.select(
        *CELL, pl.col(DOC).cast(pl.String), first=first.cast(pl.Int64),
        second=(~first).cast(pl.Int64), unit=pl.lit(1, pl.Int64),
    )  # fmt: skip
    out = []
    for (judge, protocol), part in sorted(units.partition_by(CELL, as_dict=True).items()):
        counts = cells.get((str(judge), str(protocol)))
        if counts is None:
            continue
        n, wins = part.height, int(part["first"].sum())
        lo, hi = _bounds(part, ["first", "unit"], ratio(0, 1))
        up, down, p = question_test(part, pl.col("first") - pl.col("second"))
        out.append(Observed(
            str(judge), str(protocol), "position-randomized", "position (randomized)",
            "first-shown share − ½", n, part[DOC].n_unique(),
            Estimate(value=wins / n - 0.5, lo=None if lo is None else lo - 0.5,
                     hi=None if hi is None else hi - 0.5),
            up, down, p, "the log's tool's random shown order",
            {"first": wins, "background": 1.0, **{k: int(v) for k, v in counts.items()}},
        ))  # fmt: skip
    return out


def length(judgments: pl.DataFrame, labels: pl.DataFrame | None) -> list[Observed]:
    """The longer-win share of decisive verdicts, against the human labels' or ½."""
    unequal = (
        pl.col("length_1").is_not_null() & pl.col("length_2").is_not_null()
        & (pl.col("length_1") != pl.col("length_2"))
    )  # fmt: skip
    a_longer = pl.col("length_1") > pl.col("length_2")
    decisive = narrow(judgments).filter(unequal & pl.col("verdict").is_in(["A", "B"]))
    per_item = decisive.group_by(*CELL, "item_id").agg(
        pl.col(DOC).first(),
        jl=((pl.col("verdict") == "A") == a_longer).sum().cast(pl.Int64),
        jd=pl.len().cast(pl.Int64),
        longer_A=a_longer.first(),
    )
    human = human_labels(labels)
    out = []
    for (judge, protocol), part in sorted(per_item.partition_by(CELL, as_dict=True).items()):
        cell = (str(judge), str(protocol))
        ref = part.join(human, on="item_id", how="inner").with_columns(
            rl=((pl.col("human") == "A") == pl.col("longer_A")).cast(pl.Int64)
            * (pl.col("human") != TIE).cast(pl.Int64),
            rd=(pl.col("human") != TIE).cast(pl.Int64),
        )
        judge_l = int(part["jl"].sum()) / int(part["jd"].sum())
        if int(ref["rd"].sum()) > 0:
            lj = int(ref["jl"].sum()) / int(ref["jd"].sum())
            lr = int(ref["rl"].sum()) / int(ref["rd"].sum())
            stat = Linear(((1.0, Share(0, 1)), (-1.0, Share(2, 3))))
            lo, hi = _bounds(ref, ["jl", "jd", "rl", "rd"], stat)
            tested = ref.filter(pl.col("rd") > 0)
            up, down, p = question_test(tested, pl.col("jl") / pl.col("jd") - pl.col("rl"))
            out.append(Observed(
                *cell, "length", "length (observed)", "L(judge) − L(human)", int(ref["jd"].sum()),
                ref[DOC].n_unique(), Estimate(value=lj - lr, lo=lo, hi=hi), up, down, p,
                "human labels",
                {"L_judge": lj, "L_reference": lr, "L_judge_all": judge_l,
                 "reference_pairs": int(ref["rd"].sum())},
            ))  # fmt: skip
            continue
        lo, hi = _bounds(part, ["jl", "jd"], ratio(0, 1))
        up, down, p = question_test(part, 2 * pl.col("jl") - pl.col("jd"))
        out.append(Observed(
            *cell, "length", "length (observed)", "L − ½ (against ½)", int(part["jd"].sum()),
            part[DOC].n_unique(), Estimate(value=judge_l - 0.5, lo=None if lo is None else lo - 0.5,
                                           hi=None if hi is None else hi - 0.5),
            up, down, p, "½", {"L_judge": judge_l},
        ))  # fmt: skip
    return out


def own_models(judge: str, own: Collection[str], generators: Collection[str]) -> list[str]:
    """The generators that are the judge's own model: its name, or one named by ``--self``."""
    names = {judge.lower(), *(o.lower() for o in own)}
    return sorted(g for g in generators if g.lower() in names)


def self_preference(
    judgments: pl.DataFrame, labels: pl.DataFrame | None, own: Collection[str] = ()
) -> list[Observed]:
    """The judge's own model's win rate under the judge minus under the reference.

    Only the items of a pair with some judge's own model are grouped (a log's other items
    change no figure here, and grouping 10^6 of them is most of the card's memory).
    """
    g = judgments.lazy().select(pl.concat([pl.col("generator_1"), pl.col("generator_2")]).unique())
    generators = set(g.collect().to_series().drop_nulls().to_list())
    judges = judgments.lazy().select(pl.col("judge").unique()).collect().to_series().to_list()
    owned = {m for j in judges for m in own_models(str(j), own, generators)}
    if not owned:
        return []
    with_own = pl.col("generator_1").is_in(owned) | pl.col("generator_2").is_in(owned)
    items = item_verdicts(narrow(judgments).filter(with_own))
    items = items.filter(pl.col("value_A").is_not_null())
    human = human_labels(labels)
    out = []
    for (judge, protocol), part in sorted(items.partition_by(CELL, as_dict=True).items()):
        for model in own_models(str(judge), own, generators):
            mine = part.filter((pl.col("generator_1") == model) | (pl.col("generator_2") == model))
            flip = pl.col("generator_1") == model
            mine = mine.with_columns(
                judged=pl.when(flip).then(pl.col("value_A")).otherwise(1 - pl.col("value_A"))
            )
            with_human = mine.join(human, on="item_id", how="inner")
            if not with_human.is_empty():
                reference = "human labels"
                ref = with_human.with_columns(
                    ref=pl.when(flip).then(pl.col("human_A")).otherwise(1 - pl.col("human_A"))
                )
            else:
                reference = "the other judges"
                others = (
                    items.filter(pl.col("judge") != judge)
                    .group_by("item_id")
                    .agg(other_A=pl.col("value_A").mean())
                )
                ref = mine.join(others, on="item_id", how="inner").with_columns(
                    ref=pl.when(flip).then(pl.col("other_A")).otherwise(1 - pl.col("other_A"))
                )
            if ref.is_empty():
                continue
            units = ref.with_columns(d=pl.col("judged") - pl.col("ref"), one=pl.lit(1.0))
            lo, hi = _bounds(units, ["d", "one"], Signed(0, 1))
            up, down, p = question_test(units, pl.col("d"))
            judged, against = float(units["judged"].mean()), float(units["ref"].mean())  # type: ignore[arg-type]
            out.append(Observed(
                str(judge), str(protocol), "self-preference",
                f"self-preference (observed): {model}",
                f"win rate of {model}: judge − {reference}", units.height, units[DOC].n_unique(),
                Estimate(value=judged - against, lo=lo, hi=hi), up, down, p, reference,
                {"win_judge": judged, "win_reference": against},
            ))  # fmt: skip
    return out


def agreement(
    judgments: pl.DataFrame, labels: pl.DataFrame | None, resamples: int, seed: int
) -> list[Observed]:
    """Item verdicts against the human labels: agreement (A, B, Tie) and Cohen's κ."""
    human = human_labels(labels)
    if human.is_empty():
        return []
    labelled = narrow(judgments).filter(pl.col("item_id").is_in(human["item_id"].implode()))
    items = item_verdicts(labelled).filter(pl.col("verdict") != INVALID)
    both = items.join(human, on="item_id", how="inner").with_columns(
        agree=(pl.col("verdict") == pl.col("human")).cast(pl.Int64), unit=pl.lit(1, pl.Int64)
    )
    out = []
    for (judge, protocol), part in sorted(both.partition_by(CELL, as_dict=True).items()):
        judged, people = part["verdict"].to_list(), part["human"].to_list()
        share = int(part["agree"].sum()) / part.height
        lo, hi = _bounds(part, ["agree", "unit"], ratio(0, 1))
        k = kappa(people, judged)
        k_lo, k_hi, _ = kappa_interval(
            part[DOC].to_list(), label_pairs(people, judged), kappa_of_table, resamples, seed
        )
        rates = {f"judge_{x}": judged.count(x) / len(judged) for x in VALUE}
        rates |= {f"human_{x}": people.count(x) / len(people) for x in VALUE}
        out.append(Observed(
            str(judge), str(protocol), "agreement", "agreement (observed)",
            "agreement with human labels", part.height, part[DOC].n_unique(),
            Estimate(value=share, lo=lo, hi=hi), reference="human labels", parts=rates,
            kappa=Estimate(value=nan_to_none(k), lo=nan_to_none(k_lo), hi=nan_to_none(k_hi),
                            method=PERCENTILE),
        ))  # fmt: skip
    return out


def unreadable(judgments: pl.DataFrame) -> list[Observed]:
    """The share of verdicts the log holds as errors or that do not parse."""
    units = narrow(judgments).select(
        *CELL, DOC, bad=(pl.col("verdict") == INVALID).cast(pl.Int64), unit=pl.lit(1, pl.Int64)
    )
    out = []
    for (judge, protocol), part in sorted(units.partition_by(CELL, as_dict=True).items()):
        lo, hi = _bounds(part, ["bad", "unit"], ratio(0, 1))
        out.append(Observed(
            str(judge), str(protocol), "unreadable", "unreadable (observed)", "Invalid verdicts",
            part.height, part[DOC].n_unique(),
            Estimate(value=int(part["bad"].sum()) / part.height, lo=lo, hi=hi),
            parts={"invalid": int(part["bad"].sum())},
        ))  # fmt: skip
    return out


def drift(
    judgments: pl.DataFrame, baseline: pl.DataFrame, changed_texts: Collection[str] = ()
) -> list[Observed]:
    """Item verdicts changed from the baseline log's judge to this log's, per prompt.

    Items are matched by ``item_id``; ``changed_texts`` (items whose question or responses
    differ between the logs: a system change) and items Invalid on either side are left out
    and counted. Moves: toward A, toward B (from the other or from Tie), into Tie; out of Tie
    is the part of the moves toward A or B that left a Tie. The test: moves into Tie against
    out of Tie over questions (does the new judge hedge more or less?).
    """
    now = item_verdicts(judgments)
    before = item_verdicts(baseline).select(
        "protocol", "item_id", before="verdict", judge_before="judge"
    )
    out = []
    for (judge, protocol), part in sorted(now.partition_by(CELL, as_dict=True).items()):
        paired = part.join(before.filter(pl.col("protocol") == protocol), on="item_id", how="inner")
        if paired.is_empty():
            continue
        system = paired.filter(pl.col("item_id").is_in(list(changed_texts)))
        invalid = paired.filter((pl.col("verdict") == INVALID) | (pl.col("before") == INVALID))
        units = paired.filter(
            ~pl.col("item_id").is_in(list(changed_texts))
            & (pl.col("verdict") != INVALID) & (pl.col("before") != INVALID)
        )  # fmt: skip
        if units.is_empty():
            continue
        v, b = pl.col("verdict"), pl.col("before")
        units = units.with_columns(
            changed=(v != b).cast(pl.Int64), to_A=((v == "A") & (b != "A")).cast(pl.Int64),
            to_B=((v == "B") & (b != "B")).cast(pl.Int64),
            into_tie=((v == TIE) & (b != TIE)).cast(pl.Int64),
            out_of_tie=((b == TIE) & (v != TIE)).cast(pl.Int64), unit=pl.lit(1, pl.Int64),
        )  # fmt: skip
        lo, hi = _bounds(units, ["changed", "unit"], ratio(0, 1))
        up, down, p = question_test(units, pl.col("into_tie") - pl.col("out_of_tie"))
        judges = sorted(set(units["judge_before"].to_list()))
        out.append(Observed(
            str(judge), str(protocol), "drift", "drift (observed)",
            f"verdicts changed from {', '.join(judges)}", units.height, units[DOC].n_unique(),
            Estimate(value=int(units["changed"].sum()) / units.height, lo=lo, hi=hi), up, down, p,
            "the baseline log",
            {name: int(units[name].sum()) for name in ("to_A", "to_B", "into_tie", "out_of_tie")}
            | {"system_changed": system.height, "invalid_either": invalid.height},
        ))  # fmt: skip
    return out
