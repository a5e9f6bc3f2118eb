"""Agreement between people, and between people and a judge: Cohen's κ and shares, with intervals.

One definition, used by ``judgeprobe annotate`` (its agreement table), and by the report and
the card (the judge's agreement with the human labels of a run's review). Labels are in
candidate terms (``A``, ``B``, ``Tie``). Every interval is over documents (docs/metrics.md),
each statistic read from sums over a document's rows: rates get the metrics' score interval
(``uncertainty.interval``), κ (from the summed table of label pairs) a seeded 95% percentile
bootstrap that resamples documents, whose coverage the simulation does not check
(docs/coverage.md). A resample on which κ is undefined (a single label) is left out, and how
many were is reported.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from sklearn.metrics import cohen_kappa_score

from judgeprobe.conditions import BLIND
from judgeprobe.core.cells import interval_expr
from judgeprobe.core.records import VERDICTS
from judgeprobe.metrics.uncertainty import (
    Share,
    Stat,
    percentile,
    resampled,
    safe_ratio,
    unit_interval,
    unit_patterns,
)
from judgeprobe.metrics.units import DOC
from judgeprobe.runs.review import Label, read_labels
from judgeprobe.runs.rundir import RunDir

LABELS = VERDICTS  # the categories kappa counts, in its tables' order


@dataclass(frozen=True, slots=True)
class Annotations:
    """One annotator's labels in candidate terms, by pair id."""

    annotator: str
    labels: dict[str, str]
    unanswered: int = 0


def interval(
    documents: list[str], counts: dict[str, np.ndarray], stat: Stat, resamples: int, seed: int
) -> tuple[float, float, int]:
    """95% interval of ``stat`` of the summed ``counts`` over documents.

    One entry of each count per row, ``documents`` naming each row's document. A share gets the
    metrics' score interval (``metrics.uncertainty.interval``); κ, not a sum of counts, the
    percentile bootstrap that draws a document with all its rows (``uncertainty.resampled``).
    Also the number of resamples where the statistic was undefined (0 for a score interval).
    """
    if not documents:
        return float("nan"), float("nan"), 0
    rows = pl.DataFrame({DOC: documents, **counts})
    if isinstance(stat, Share):
        return (*unit_interval(rows, list(counts), stat, by=DOC), 0)
    drawn = resampled(*unit_patterns(rows, list(counts), by=DOC), {"": stat}, resamples, seed)[""]
    return (*percentile(drawn), int(np.isnan(drawn).sum()))


def share(hits: np.ndarray) -> dict[str, np.ndarray]:
    """The counts whose sums give the share of rows that are hits."""
    return {"hits": hits.astype(np.int64), "rows": np.ones(len(hits), dtype=np.int64)}


def label_pairs(a: list[str], b: list[str]) -> dict[str, np.ndarray]:
    """One count per (label of a, label of b): summed, the table Cohen's kappa is read from."""
    return {f"{x}|{y}": np.array([p == x and q == y for p, q in zip(a, b, strict=True)],
                                 dtype=np.int64) for x in LABELS for y in LABELS}  # fmt: skip


def kappa_of_table(s: np.ndarray) -> np.ndarray:
    """Cohen's kappa from the summed ``label_pairs`` (..., 9); NaN with one label throughout.

    (po − pe) / (1 − pe) with po = Σ table_ii / n and pe = Σ rows_i · columns_i / n².
    """
    table = s.reshape(*s.shape[:-1], len(LABELS), len(LABELS))
    n = table.sum(axis=(-2, -1))
    agree = np.trace(table, axis1=-2, axis2=-1)
    chance = (table.sum(axis=-1) * table.sum(axis=-2)).sum(axis=-1)
    return safe_ratio(n * agree - chance, n * n - chance)


def kappa(a: list[str], b: list[str]) -> float:
    """Cohen's kappa over A/B/Tie; NaN when it is undefined (one label throughout)."""
    if len(set(a) | set(b)) < 2:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(cohen_kappa_score(a, b, labels=list(LABELS)))


def majority(annotations: list[Annotations]) -> dict[str, str]:
    """Each pair's label given by more than half of the annotators who labelled it."""
    votes: dict[str, Counter[str]] = {}
    for a in annotations:
        for pair, label in a.labels.items():
            votes.setdefault(pair, Counter())[label] += 1
    out = {}
    for pair, count in votes.items():
        label, n = count.most_common(1)[0]
        if n * 2 > sum(count.values()):
            out[pair] = label
    return out


@dataclass(frozen=True, slots=True)
class HumanPair:
    """A labelled pair as the judge's agreement needs it: its document and items."""

    pair_id: str
    document_id: str
    item_ids: tuple[str, ...]


JUDGE_KAPPA_SCHEMA = {
    "judge": pl.String, "protocol": pl.String, "kappa": pl.Float64, "lo": pl.Float64,
    "hi": pl.Float64, "pairs": pl.Int64, "judgments": pl.Int64, "undefined_resamples": pl.Int64,
}  # fmt: skip


def judge_kappa(
    pairs: Sequence[HumanPair], annotations: list[Annotations], judgments: pl.DataFrame,
    resamples: int, seed: int, condition: str = BLIND,
) -> pl.DataFrame:  # fmt: skip
    """Cohen's κ between the human majority and each judge × protocol, with its interval.

    One row of the label table per valid judgment under ``condition`` (people saw the pairs
    without cues: Blind) of a pair's items; the pair's human label is its majority
    (``majority``). Pairs whose people split are left out.
    """
    human = majority(annotations)
    docs = {p.pair_id: p.document_id for p in pairs}
    shown = pl.DataFrame(
        [{"pair_id": p.pair_id, "item_id": i} for p in pairs if p.pair_id in human
         for i in p.item_ids],
        schema={"pair_id": pl.String, "item_id": pl.String},
    )  # fmt: skip
    rows = shown.join(
        judgments.filter((pl.col("condition") == condition) & pl.col("verdict").is_in(LABELS)),
        on="item_id",
        how="inner",
    )
    out = []
    for (judge, protocol), g in sorted(rows.group_by("judge", "protocol"),
                                       key=lambda c: tuple(map(str, c[0]))):  # fmt: skip
        people = [human[p] for p in g["pair_id"]]
        verdicts = g["verdict"].to_list()
        lo, hi, undefined = interval([docs[p] for p in g["pair_id"]],
                                     label_pairs(people, verdicts), kappa_of_table, resamples,
                                     seed)  # fmt: skip
        out.append({"judge": judge, "protocol": protocol, "kappa": kappa(people, verdicts),
                    "lo": lo, "hi": hi, "pairs": g["pair_id"].n_unique(),
                    "judgments": g.height, "undefined_resamples": undefined})  # fmt: skip
    return pl.DataFrame(out, schema=JUDGE_KAPPA_SCHEMA)


def labelled(labels: Sequence[Label]) -> tuple[list[HumanPair], list[Annotations]]:
    """Stored labels as the pairs they label and each person's labels."""
    pairs = {x.pair_id: HumanPair(x.pair_id, x.document_id, x.item_ids) for x in labels}
    people: dict[str, dict[str, str]] = {}
    for x in labels:
        people.setdefault(x.who, {})[x.pair_id] = x.preferred
    return list(pairs.values()), [Annotations(who, found) for who, found in sorted(people.items())]


def human_kappa(
    run: RunDir, judgments: pl.DataFrame, resamples: int, seed: int
) -> tuple[pl.DataFrame, int, int]:
    """The judges' κ with the run's human labels (``judge_kappa``), the pairs and people.

    Empty when nobody labelled the run's sample (``judgeprobe review``, ``annotate import``).
    """
    labels = read_labels(run)
    pairs, people = labelled(labels)
    if not labels:
        return pl.DataFrame(schema=JUDGE_KAPPA_SCHEMA), 0, 0
    return judge_kappa(pairs, people, judgments, resamples, seed), len(pairs), len(people)


def kappa_table(kappa: pl.DataFrame) -> pl.DataFrame:
    """The judges' κ rows (``JUDGE_KAPPA_SCHEMA``) as the report and the card show them."""
    return kappa.select(
        "judge", "protocol", interval_expr("kappa"), "pairs", "judgments", "undefined_resamples"
    )
