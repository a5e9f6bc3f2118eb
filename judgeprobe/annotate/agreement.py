"""Read the annotators' files back and measure agreement (people with people, judges with people).

- each annotator's Tie rate (the paper: 94 and 92 of 100);
- Cohen's kappa between every two annotators on the pairs both labelled (scikit-learn's
  ``cohen_kappa_score`` over A/B/Tie);
- the human majority per pair (a label more than half of its annotators gave; none when they
  split), and how often each judge × protocol × condition verdict on the pair's items equals
  it, beside the judge's own Tie rate on those pairs.

Labels arrive in screen terms (``1``/``2`` as shown) and are turned into candidate terms
(``A``/``B``) with the key ``export`` wrote. Every interval is over documents (docs/metrics.md),
each statistic read from sums over a document's rows: rates get the metrics' score interval
(``metrics.uncertainty.interval``), kappa (from the summed table of label pairs) a seeded 95%
percentile bootstrap that resamples documents, whose coverage the simulation does not check
(docs/coverage.md). A resample on which kappa is undefined (a single label) is left out, and how
many were is reported.
"""

from __future__ import annotations

import csv
import io
import warnings
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import polars as pl
from sklearn.metrics import cohen_kappa_score

from judgeprobe import JudgeprobeError
from judgeprobe.annotate.export import KEY_FIELDS
from judgeprobe.metrics.items import DOC
from judgeprobe.metrics.uncertainty import (
    Share,
    Stat,
    percentile,
    ratio,
    resampled,
    safe_ratio,
    unit_interval,
    unit_patterns,
)
from judgeprobe.runs.rundir import RunDir

LABELS = ("A", "B", "Tie")
SCREEN = {"A": {"1": "A", "2": "B"}, "B": {"1": "B", "2": "A"}}  # by shown_first


@dataclass(frozen=True, slots=True)
class Annotations:
    """One annotator's labels in candidate terms, by pair id."""

    annotator: str
    labels: dict[str, str]
    unanswered: int


def _read_csv(path: Path) -> list[dict[str, str]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise JudgeprobeError(f"{path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise JudgeprobeError(f"{path}: not UTF-8 text") from None
    return list(csv.DictReader(io.StringIO(text, newline="")))


def read_key(run_dir: Path) -> pl.DataFrame:
    """The export's unblinding key, which maps each pair back to its item and subset."""
    path = RunDir(run_dir).annotation_key
    if not path.is_file():
        raise JudgeprobeError(f"{run_dir}: no annotation/key.csv; run `annotate export` first")
    rows = _read_csv(path)
    if not rows or set(KEY_FIELDS) - set(rows[0]):
        raise JudgeprobeError(f"{path}: not a key written by `annotate export`")
    return pl.DataFrame(rows, schema=dict.fromkeys(KEY_FIELDS, pl.String))


def read_annotations(path: Path, shown_first: dict[str, str]) -> Annotations:
    """Read one annotator's labels file, so agreement can be computed.

    ``pair_id`` and ``label`` columns (``1``, ``2``, ``Tie``; empty = not answered), the annotator
    named by an ``annotator`` column or else the file name.
    """
    rows = _read_csv(path)
    if not rows or not {"pair_id", "label"} <= set(rows[0]):
        raise JudgeprobeError(f"{path}: expected a CSV with pair_id and label columns")
    names = {r.get("annotator", "").strip() for r in rows} - {""}
    if len(names) > 1:
        raise JudgeprobeError(f"{path}: one annotator per file (found {', '.join(sorted(names))})")
    labels: dict[str, str] = {}
    unanswered = 0
    for n, row in enumerate(rows, start=2):
        pair, raw = (row.get("pair_id") or "").strip(), (row.get("label") or "").strip()
        if pair not in shown_first:
            raise JudgeprobeError(f"{path}: line {n}: unknown pair_id {pair!r}")
        if pair in labels:
            raise JudgeprobeError(f"{path}: line {n}: pair {pair} labelled twice")
        if not raw:
            unanswered += 1
            continue
        label = "Tie" if raw.lower() == "tie" else SCREEN[shown_first[pair]].get(raw)
        if label is None:
            raise JudgeprobeError(f"{path}: line {n}: label {raw!r} is not 1, 2 or Tie")
        labels[pair] = label
    return Annotations(names.pop() if names else path.stem, labels, unanswered)


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


def _row(kind: str, who: str, condition: str, metric: str, value: float,
         interval: tuple[float, float, int], n: int) -> dict[str, object]:  # fmt: skip
    lo, hi, undefined = interval
    return {"kind": kind, "who": who, "condition": condition, "metric": metric, "value": value,
            "lo": lo, "hi": hi, "n": n, "undefined_resamples": undefined}  # fmt: skip


def agreement(
    key: pl.DataFrame, annotations: list[Annotations], judgments: pl.DataFrame,
    resamples: int = 10_000, seed: int = 0,
) -> pl.DataFrame:  # fmt: skip
    """The tidy agreement table: kind, who, condition, metric, value, lo, hi, n."""
    names = [a.annotator for a in annotations]
    if len(set(names)) != len(names):
        raise JudgeprobeError(f"two files name the same annotator ({', '.join(names)})")
    doc_of = dict(zip(key["pair_id"], key["document_id"], strict=True))
    out: list[dict[str, object]] = []
    mean = ratio(0, 1)  # Σ hits / Σ rows
    for a in annotations:
        pairs = sorted(a.labels)
        tie = np.array([a.labels[p] == "Tie" for p in pairs])
        ci = interval([doc_of[p] for p in pairs], share(tie), mean, resamples, seed)
        out.append(_row("annotator", a.annotator, "", "tie_rate",
                        float(tie.mean()) if pairs else np.nan, ci, len(pairs)))  # fmt: skip
    for x, y in combinations(annotations, 2):
        both = sorted(set(x.labels) & set(y.labels))
        lx, ly = [x.labels[p] for p in both], [y.labels[p] for p in both]
        counts = label_pairs(lx, ly)
        ci = interval([doc_of[p] for p in both], counts, kappa_of_table, resamples, seed)
        out.append(_row("annotators", f"{x.annotator} vs {y.annotator}", "", "cohen_kappa",
                        kappa(lx, ly) if both else np.nan, ci, len(both)))  # fmt: skip
    human = majority(annotations)
    items = key.select("pair_id", "document_id", item_id=pl.col("item_ids").str.split(";"))
    verdicts = (
        items.explode("item_id")
        .filter(pl.col("pair_id").is_in(list(human)))
        .join(judgments.filter(pl.col("verdict") != "Invalid"), on="item_id", how="inner")
        .with_columns(human=pl.col("pair_id").replace_strict(human, default=None))
    )
    cells = verdicts.group_by("judge", "protocol", "condition", maintain_order=True)
    for (judge, protocol, condition), g in sorted(cells, key=lambda c: tuple(map(str, c[0]))):
        hit = (g["verdict"] == g["human"]).to_numpy()
        tie = (g["verdict"] == "Tie").to_numpy()
        docs = g["document_id"].to_list()
        who = f"{judge} {protocol}"
        for metric, values in (("agreement_with_majority", hit), ("judge_tie_rate", tie)):
            ci = interval(docs, share(values), mean, resamples, seed)
            out.append(_row("judge", who, str(condition), metric, float(values.mean()), ci,
                            g["pair_id"].n_unique()))  # fmt: skip
    agreed = sorted(human)
    tie = np.array([human[p] == "Tie" for p in agreed])
    ci = interval([doc_of[p] for p in agreed], share(tie), mean, resamples, seed)
    out.append(_row("majority", "humans", "", "tie_rate",
                    float(tie.mean()) if agreed else np.nan, ci, len(agreed)))  # fmt: skip
    return pl.DataFrame(out, infer_schema_length=None)
