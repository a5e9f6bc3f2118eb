"""The self-test's battery design: one battery cue and a self-preference, planted and recovered.

A second, smaller design beside the default one (``--battery``; the default run and its
figures are untouched). Its items are self-preference items: candidate 1 is written in the
simulated judge's own style (it carries ``OWN_STYLE``), candidate 2 in another's, at equal
length. The simulated judge prefers the summary wearing "Written by you" (the battery's
self-identification cue, planted as label anchoring) and sends a non-Tie verdict to its own
style with probability ``self_preference``. The default checks then recover the label cue on
every condition that shows it alone (``SelfID``, ``SelfIDFlip`` against ``SelfIDPlacebo``,
``SelfOwn``, ``SelfOther``), and one more line recovers the self-preference:

- **exact**: the report's unlabelled win rate of the own text (``metrics.selfpref``) equals the
  one the oracle's replayed verdicts give;
- **interval**: on Blind items whose verdict before self-preference was the other summary,
  the share that went to the own text lies within the planted rate's 99.9% interval.
"""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import polars as pl

from judgeprobe.conditions import BLIND
from judgeprobe.core.records import INVALID, TIE
from judgeprobe.metrics.selfpref import UNLABELLED, self_preference
from judgeprobe.selftest.check import Line, first_order
from judgeprobe.selftest.simulator import OWN_STYLE, Biases
from judgeprobe.selftest.sweep import write_config
from judgeprobe.selftest.synthetic import synthetic_document

CONDITIONS = [BLIND, "SelfID", "SelfIDFlip", "SelfIDPlacebo", "SelfOwn", "SelfOther"]
PLANTED: dict[str, object] = {"favoured_label": "Written by you", "self_preference": 0.4}
"""What the battery design plants beyond the self-test's defaults (label anchoring 0.5)."""
SUBSET = "self_vs_other"


def write_battery_items(path: Path, n: int, seed: int = 1) -> Path:
    """``n`` self-preference items: the judge's own style (candidate 1) against another's."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        doc, one, two = synthetic_document(rng, i)
        rows.append({
            "item_id": f"selfpref-{i:04d}", "subset": SUBSET, "document_id": f"doc-{i:04d}",
            "document": doc, "candidate_1": f"{one} {OWN_STYLE}, that was the outcome.",
            "candidate_2": f"{two} In brief, that was the outcome.",
            "source_1": "self", "source_2": "other",
            "generator_1": "llm:simulated", "generator_2": "llm:other",
        })  # fmt: skip
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def battery_config(out: Path, n_items: int, judge: str) -> Path:
    """The battery design's sweep: Baseline, both orders, the label arms and the SelfID pair."""
    out.mkdir(parents=True, exist_ok=True)
    items = write_battery_items(out / "items.jsonl", n_items)
    return write_config(out, "selftest-battery", items, ["baseline"], CONDITIONS, judge=judge)


def self_preference_lines(
    judgments: pl.DataFrame, oracle: pl.DataFrame, biases: Biases
) -> list[Line]:
    """One line per judge and protocol: the planted self-preference, recovered."""
    keys = ["judge", "protocol", "condition", "subset", "item_id", "order", "seed"]
    m = judgments.join(oracle, on=keys, how="left").filter(pl.col("subset") == SUBSET)
    table = self_preference(judgments, resamples=0)
    lines = []
    for (judge, protocol), part in m.partition_by(["judge", "protocol"], as_dict=True).items():
        blind = part.filter((pl.col("condition") == BLIND) & (pl.col("verdict") != INVALID))
        won = {"A": 1.0, "B": 0.0, "Tie": 0.5}
        want = blind["expected_verdict"].replace_strict(won, return_dtype=pl.Float64).mean()
        row = table.filter(
            (pl.col("judge") == judge) & (pl.col("protocol") == protocol)
            & (pl.col("subset") == SUBSET) & (pl.col("measure") == UNLABELLED)
        )  # fmt: skip
        got = row["value"][0] if row.height else None
        exact = isinstance(got, float) and isinstance(want, float) and abs(got - want) < 1e-9
        units = first_order(blind).filter(
            (pl.col("own") != TIE) & (pl.col("x_taste") != TIE)
            & (pl.col("x_taste") != pl.col("own"))
        )  # fmt: skip
        k = int((units["verdict"] == units["own"]).sum())
        shown = [f"{x:.4f}" if isinstance(x, float) else "–" for x in (got, want)]
        detail = f"report unlabelled own win rate {shown[0]}, expected {shown[1]}"
        lines.append(
            Line("self-preference", str(protocol), biases.self_preference, k, units.height,
                 exact, detail)
        )  # fmt: skip
    return lines
