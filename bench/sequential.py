"""The saving of a sequential design, measured (issue 38, item 3).

    .venv/bin/python bench/sequential.py            # --cards N --seed S --quick

Simulated judges (``selftest.verdict_rates``'s null judge, with cue effects planted on the
conditions each scenario names) judge a design's whole plan; their sequential runs are replayed
look by look exactly as ``cue.rounds`` runs them (``selftest.sequential_rates.replay_runs``), with
the packaged thresholds (cue threshold 0.05). Reported per scenario:

- **requests**: the sequential run's requests (the rounds it planned, each round under the
  conditions its open rows need) against the fixed design's over the same maximum;
- **settled by 1.1 N**: N is the documents at which a fixed design settles the planted row (its
  MDE at the card's level and power reaches the larger of the effect and the threshold,
  ``card.sequential.documents_needed`` from the true effect); the sequential design with its
  maximum at 1.1 N is run and the share of runs whose row settled is set against the share of
  fixed cards at N documents that settled it (BIASED or CLEAR), both simulated;
- **error rates**: a BIASED no-effect row, a CLEAR row at the threshold, against item 2's bounds.

Scenarios: one cue (the default sweep's Blind, True and DegradedNumber, one random order per
item: the cue row and the sensitivity row that lets it be CLEAR) with a
strong effect (three times the threshold), no effect, an effect at the threshold; and the mixed
battery: the cue battery's label families, each cue with its placebo, CALM's authority,
bandwagon and distraction, Blind with half the items in both orders (the position row) and the
sensitivity conditions, with two cues strong, two at the threshold and the rest without effect.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import polars as pl

from judgeprobe.card.sequential import documents_needed
from judgeprobe.card.thresholds import LoadedThresholds, load_thresholds
from judgeprobe.cue.config import load_config
from judgeprobe.selftest.sequential_rates import replay_runs
from judgeprobe.selftest.verdict_rates import (
    Design,
    Truth,
    cards_of,
    cue_move_rate,
    draw_verdicts,
    plan_table,
    synthetic_items,
)
from judgeprobe.text.lexicons import load_lexicons

BATTERY = [
    f"{family}{arm}"
    for family in ("Source", "Temporal", "Age", "Gender", "Ethnicity", "Education")
    for arm in ("", "Flip", "Placebo")
]
BATTERY += ["Authority", "AuthorityPlacebo", "Bandwagon", "BandwagonPlacebo", "Distraction",
            "DistractionPlacebo"]  # fmt: skip
SENSITIVITY = ["DegradedNumber", "DegradedNegation"]
TESTS = 2  # the one-cue card's tests: the cue row and the sensitivity row
STRONG, AT = ("Source", "Authority"), ("Gender", "Bandwagon")
"""The mixed battery's planted cues: two strong, two at the threshold, the rest without effect."""


def design(conditions: list[str], documents: int, round_: int, resamples: int,
           swap: float = 0.0) -> Design:  # fmt: skip
    """A sequential design over ``documents`` synthetic documents, one judge, Baseline."""
    cfg = load_config(None).model_copy(update={
        "conditions": conditions, "order": "random", "swap": swap, "design": "sequential",
        "round": round_,
    })  # fmt: skip
    cfg = cfg.model_copy(update={"judges": cfg.judges[:1]})
    name = f"{len(conditions)} conditions, {documents} documents, rounds of {round_}"
    return Design(name, cfg, synthetic_items(documents, "eq_pair"), resamples)


def draw(truth: Truth, plan: pl.DataFrame, rng: np.random.Generator, effects: Mapping[str, float],
         thresholds: LoadedThresholds) -> np.ndarray:  # fmt: skip
    """The null judge's verdicts with each cue in ``effects`` moving its row by that effect.

    A battery cue is compared with its placebo (the move rate that makes LDS − LDS(placebo) the
    effect); True, without a placebo in the design, with LDS − OLS.
    """
    verdicts = draw_verdicts("null", truth, rng, thresholds, against_placebo=False)
    condition = plan["condition"].to_numpy()
    for cue, effect in effects.items():
        rate = cue_move_rate(effect, against_placebo=cue != "True")
        move = (condition == cue) & (rng.random(truth.item.size) < rate)
        verdicts = np.where(move, truth.target, verdicts)
    return verdicts


@dataclass(frozen=True)
class Measured:
    """One scenario's runs: requests, settlement and verdicts of its planted rows."""

    scenario: str
    requests: float  # mean sequential requests / fixed requests over the same maximum
    stopped_docs: float  # mean documents judged when the runs stopped
    maximum: int
    verdicts: dict[str, float]  # the planted row's verdicts: share of runs
    biased_null: float  # share of runs with a BIASED row whose true effect is 0
    seconds: float


def run_scenario(name: str, d: Design, effects: Mapping[str, float], watched: str, cards: int,
                 seed: int, thresholds: LoadedThresholds) -> Measured:  # fmt: skip
    """``cards`` seeded sequential runs of the judge with ``effects`` on design ``d``."""
    start = time.monotonic()
    plan = plan_table(d)
    truth = Truth.of(plan)
    lex = load_lexicons()
    verdicts = [draw(truth, plan, np.random.default_rng([seed, i, 38]), effects, thresholds)
                for i in range(cards)]  # fmt: skip
    runs = replay_runs(d, plan, verdicts, lex, thresholds, seed)
    ratio = float(np.mean([r.requests / r.fixed_requests for r in runs]))
    seen: dict[str, int] = {}
    nulls = 0
    for r in runs:
        rows = r.card.rows
        v = rows.filter(pl.col("row") == watched)["verdict"].to_list()
        key = v[0] if v else "absent"
        seen[key] = seen.get(key, 0) + 1
        null_rows = rows.filter(
            pl.col("kind").is_in(["cue", "position"]) & ~pl.col("row").is_in(list(effects))
        )
        nulls += "BIASED" in null_rows["verdict"].to_list()
    return Measured(name, ratio, float(np.mean([r.documents for r in runs])), d.documents,
                    {k: n / cards for k, n in sorted(seen.items())}, nulls / cards,
                    time.monotonic() - start)  # fmt: skip


def fixed_settled(d: Design, effects: Mapping[str, float], watched: str, cards: int, seed: int,
                  thresholds: LoadedThresholds) -> dict[str, float]:  # fmt: skip
    """The fixed design's verdicts of the planted row on ``d``'s documents: share of cards."""
    plan = plan_table(d)
    truth = Truth.of(plan)
    lex = load_lexicons()
    verdicts = [draw(truth, plan, np.random.default_rng([seed, i, 39]), effects, thresholds)
                for i in range(cards)]  # fmt: skip
    seen: dict[str, int] = {}
    for card in cards_of(plan, verdicts, lex, thresholds, d.resamples, seed):
        v = card.rows.filter(pl.col("row") == watched)["verdict"].to_list()
        key = v[0] if v else "absent"
        seen[key] = seen.get(key, 0) + 1
    return {k: n / cards for k, n in sorted(seen.items())}


def background(d: Design, thresholds: LoadedThresholds, seed: int) -> tuple[float, float]:
    """The null judge's discordant share and row count on True, from one large card."""
    plan = plan_table(d)
    v = draw(Truth.of(plan), plan, np.random.default_rng([seed, 99]), {}, thresholds)
    card = cards_of(plan, [v], load_lexicons(), thresholds, 0, seed)[0]
    r = card.rows.filter(pl.col("row") == "True").row(0, named=True)
    return (r["up"] + r["down"]) / r["documents"], float(r["documents"])


def settled_share(verdicts: Mapping[str, float]) -> float:
    """The share of runs or cards whose row settled (BIASED or CLEAR)."""
    return sum(v for k, v in verdicts.items() if k in ("BIASED", "CLEAR", "INSENSITIVE"))


def main(argv: list[str] | None = None) -> int:
    """Every scenario, printed as RESULTS.md shows it."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cards", type=int, default=60, help="runs per scenario")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="smaller designs (a smoke run)")
    args = p.parse_args(argv)
    t = load_thresholds()
    thr = t.values.cue_effect
    scale = 0.3 if args.quick else 1.0
    maximum, round_ = int(1000 * scale), int(50 * scale)
    one = ["Blind", "True", "DegradedNumber"]  # the default sweep's: the cue, and the reading row
    b, _ = background(design(one, 4000, 4000, 0), t, args.seed)
    lines = [f"background (null judge, True vs OLS, discordant documents): {b:.3f}"]
    scenarios = [("strong (3× threshold)", {"True": 3 * thr}), ("no effect", {}),
                 ("at the threshold", {"True": thr})]  # fmt: skip
    same = []
    for name, effects in scenarios:
        m = run_scenario(name, design(one, maximum, round_, 200), effects, "True", args.cards,
                         args.seed, t)  # fmt: skip
        same.append(m)
        print(f"{name}: {m}", file=sys.stderr, flush=True)
    bmax, bround = int(1000 * scale), int(100 * scale)
    battery = design(["Blind", *BATTERY, *SENSITIVITY], bmax, bround, 200, swap=0.5)
    mixed = {**dict.fromkeys(STRONG, 3 * thr), **dict.fromkeys(AT, thr)}
    m = run_scenario("mixed battery", battery, mixed, STRONG[0], max(args.cards // 3, 10),
                     args.seed, t)  # fmt: skip
    same.append(m)
    print(f"mixed: {m}", file=sys.stderr, flush=True)
    lines += ["", "| scenario | maximum (docs) | requests, sequential / fixed | documents at stop "
              "| planted row's verdicts | a no-effect row BIASED | seconds |",
              "|---|---:|---:|---:|---|---:|---:|"]  # fmt: skip
    for m in same:
        shown = ", ".join(f"{k} {v:.0%}" for k, v in m.verdicts.items())
        lines.append(f"| {m.scenario} | {m.maximum} | {m.requests:.2f} | {m.stopped_docs:.0f} | "
                     f"{shown} | {m.biased_null:.0%} | {m.seconds:.0f} |")  # fmt: skip
    # The price of looking: a sequential maximum of 1.1 N against the fixed design at N.
    lines += ["", "| scenario | N (fixed) | fixed at N: settled | sequential, maximum 1.1 N: "
              "settled | its verdicts | requests, sequential / fixed at N |",
              "|---|---:|---:|---:|---|---:|"]  # fmt: skip
    for name, effects in scenarios:
        size = effects.get("True", 0.0)
        up_down = b + size
        n = documents_needed(size, round(up_down * 1000), 0, 1000, thr, t, TESTS) or 0
        n = int(n * scale) if args.quick else n
        cap = math.ceil(1.1 * n)
        fixed = fixed_settled(design(one, n, n, 200), effects, "True", args.cards, args.seed, t)
        seq = run_scenario(name, design(one, cap, max(cap // 20, 1), 200), effects, "True",
                           args.cards, args.seed, t)  # fmt: skip
        spent = seq.requests * cap / n  # the fixed design's requests grow with its documents
        shown = ", ".join(f"{k} {v:.0%}" for k, v in seq.verdicts.items())
        lines.append(f"| {name} | {n} | {settled_share(fixed):.0%} | "
                     f"{settled_share(seq.verdicts):.0%} | {shown} | {spent:.2f} |")  # fmt: skip
        print(f"1.1N {name}: N={n} fixed={fixed} seq={seq}", file=sys.stderr, flush=True)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
